/**
 * `Verifier.decide`: today's pre-call check with the expectation a policy gives for an action,
 * structured authority, and a decision receipt (docs/policy.md).
 */
import type { AuthorityOutcome, Decision } from "@passport/protocol";
import { type AuthorityCheck, type AuthorityResult, evaluateAuthority } from "./authority.ts";
import type { VerifierContext } from "./context.ts";
import type { DecisionExpectation, PolicyChecks, SuppliedRecord } from "./expectation.ts";
import type { SeenVersion, VerifyOutcome } from "./outcome.ts";
import {
  type ActionPolicy,
  actionPolicyFor,
  DEFAULT_AUTHORITY_DECISION,
  defaultDecision,
  type PolicyDocument,
} from "./policy.ts";
import { buildReceipt, type DecisionReceipt } from "./receipt.ts";
import type { PassportRecordView } from "./record.ts";
import { type Verified, verifyRecord } from "./verify.ts";

export interface DecideRequest {
  policy: PolicyDocument;
  /** The policy action to decide, e.g. `"refund"`; one the policy does not name is a `PolicyError`. */
  action: string;
  baseUrl?: string;
  statusToken?: string;
  record?: SuppliedRecord;
  signal?: AbortSignal;
  seen?: SeenVersion;
  /** The call's own amount, checked against the grant's limit (same currency). */
  amount?: { value: string; currency: string };
  /** The call's own resource, checked against the grant's scope. */
  resource?: string;
}

export interface DecisionResult {
  decision: Decision;
  /** Today's outcome, unchanged in meaning. */
  outcome: VerifyOutcome;
  receipt: DecisionReceipt;
  /** Present when the policy requires authority and the record was read. */
  authority?: AuthorityCheck;
}

/** The expectation a policy gives for an action, with the call's own target and proof. */
function expectationFor(action: ActionPolicy, request: DecideRequest): DecisionExpectation {
  const policy: PolicyChecks = {
    ...(action.organisations ? { organisations: action.organisations } : {}),
    ...(action.environments ? { environments: action.environments } : {}),
    ...(action.versions !== undefined ? { versions: action.versions } : {}),
  };
  return {
    ...(action.family ? { family: action.family } : {}),
    ...(action.consequence ? { consequence: action.consequence } : {}),
    ...(action.bindings ? { bindings: action.bindings } : {}),
    ...(action.claims
      ? {
          evidence: action.claims.map((c) =>
            c.max_age === undefined ? c.claim : { claim: c.claim, maxAge: c.max_age },
          ),
        }
      : {}),
    ...(action.lifecycle ? { lifecycle: action.lifecycle } : {}),
    ...(action.availability ? { availability: action.availability } : {}),
    ...(action.status_max_age !== undefined ? { statusMaxAge: action.status_max_age } : {}),
    ...(request.baseUrl !== undefined ? { baseUrl: request.baseUrl } : {}),
    ...(request.statusToken ? { statusToken: request.statusToken } : {}),
    ...(request.record ? { record: request.record } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.seen ? { seen: request.seen } : {}),
    ...(Object.keys(policy).length > 0 ? { policy } : {}),
  };
}

const AUTHORITY_OUTCOME: Record<Exclude<AuthorityResult, "held">, AuthorityOutcome> = {
  not_held: "authority_not_held",
  not_established: "authority_not_held",
  expired: "authority_expired",
  not_entitled: "authority_not_entitled",
};

/**
 * Decides `request.action` on a passport (`Verifier.decide`), also answering the record decided
 * on (`decideCall` reads the caller's keys from it).
 */
export async function decide(
  context: VerifierContext,
  identityId: string,
  request: DecideRequest,
): Promise<{ result: DecisionResult; record?: PassportRecordView }> {
  const action = actionPolicyFor(request.policy, request.action);
  const expectation = expectationFor(action, request);
  const verified = await verifyRecord(context, identityId, expectation);
  const result = await decision({ identityId, request, action, expectation, verified, now: context.now() });
  return { result, ...(verified.record ? { record: verified.record } : {}) };
}

/**
 * Maps the outcome to a decision by the action's `outcomes` (default: today's next step, `proceed`
 * as `allow`). Authority is evaluated whenever the policy requires it and the record was read; a
 * failure changes the decision only when the identity check would allow (an identity failure is
 * cleared first), by `outcomes.authority_*` (default `deny`).
 */
async function decision(decided: {
  identityId: string;
  request: DecideRequest;
  action: ActionPolicy;
  expectation: DecisionExpectation;
  verified: Verified;
  now: number;
}): Promise<DecisionResult> {
  const { identityId, request, action, expectation, verified, now } = decided;
  const { outcome, record } = verified;
  let chosen: Decision = action.outcomes?.[outcome.outcome] ?? defaultDecision(outcome.next_step);
  const authority =
    action.authority && record ? evaluateAuthority(record, action.authority, request.action, request, now) : undefined;
  if (authority && authority.result !== "held" && chosen === "allow") {
    const key = AUTHORITY_OUTCOME[authority.result];
    chosen = action.outcomes?.[key] ?? DEFAULT_AUTHORITY_DECISION[key];
  }
  const receipt = await buildReceipt({
    identityId,
    action: request.action,
    policy: request.policy,
    decision: chosen,
    outcome,
    expectation,
    ...(record ? { record } : {}),
    ...(verified.statusToken ? { statusToken: verified.statusToken } : {}),
    ...(action.authority ? { authority: authority ?? "not_checked" } : {}),
    now,
  });
  return { decision: chosen, outcome, receipt, ...(authority ? { authority } : {}) };
}
