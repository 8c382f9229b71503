// TEMPORARY: the decision API of the shared contract (policy, decide, receipt) until the policy
// branch lands; replaced by ../policy.ts, ../decide.ts and ../receipt.ts at the merge.
import type { Consequence, Duration, SuppliedRecord } from "../expectation.ts";
import type { OrganisationExpectation, OutcomeClass, RequiredBinding, VerifyOutcome } from "../outcome.ts";
import type { AvailabilitySignal, Lifecycle } from "../record.ts";
import type { Verifier } from "../verifier.ts";

export type Decision = "allow" | "challenge" | "deny" | "delay" | "re-resolve";

export interface RequiredAuthority {
  action?: string;
  resource?: string;
  amount?: { value: string; currency: string };
  granted_by?: ("responsible" | "parent" | "passport")[];
}

export interface CallerPolicy {
  required: boolean;
  family?: "agent" | "api";
  organisations?: (string | OrganisationExpectation)[];
  uses_link?: boolean;
  authority?: RequiredAuthority;
  consequence?: Consequence;
  signature_window?: Duration;
}

export interface ActionPolicy {
  consequence?: Consequence;
  family?: "api" | "agent";
  organisations?: (string | OrganisationExpectation)[];
  environments?: string[];
  versions?: string;
  bindings?: RequiredBinding[];
  claims?: { claim: string; max_age?: Duration }[];
  authority?: RequiredAuthority;
  lifecycle?: Lifecycle[];
  availability?: AvailabilitySignal[];
  status_max_age?: Duration;
  outcomes?: Partial<Record<OutcomeClass, Decision>>;
  caller?: CallerPolicy;
}

export interface PolicyDocument {
  policy_format: "svc.passport_policy";
  version: 1;
  defaults?: ActionPolicy;
  actions: Record<string, ActionPolicy>;
}

export interface ReceiptSide {
  identity_id: string;
  record_version?: number;
  digest?: string;
  kid?: string;
  status?: { issued_at: string; kid?: string; digest: string };
}

export interface DecisionReceipt {
  receipt_format: "svc.passport_decision";
  version: 1;
  decided_at: string;
  action: string;
  policy_digest: string;
  decision: Decision;
  outcome: OutcomeClass;
  subject: ReceiptSide;
  caller?: ReceiptSide;
  checks: { check: string; result: "passed" | "failed" | "not_checked"; detail?: string }[];
}

export interface DecideRequest {
  policy: PolicyDocument;
  action: string;
  baseUrl?: string;
  statusToken?: string;
  record?: SuppliedRecord;
  signal?: AbortSignal;
  amount?: { value: string; currency: string };
  resource?: string;
}

export interface DecisionResult {
  decision: Decision;
  outcome: VerifyOutcome;
  receipt: DecisionReceipt;
}

const NEXT: Record<string, Decision> = {
  proceed: "allow",
  challenge: "challenge",
  deny: "deny",
  delay: "delay",
  "re-resolve": "re-resolve",
};

/** Stand-in for `Verifier.decide` over the policy members the expectation can say. */
export async function decide(verifier: Verifier, identityId: string, request: DecideRequest): Promise<DecisionResult> {
  const policy = { ...request.policy.defaults, ...request.policy.actions[request.action] };
  const organisation = policy.organisations?.[0];
  const outcome = await verifier.verify(identityId, {
    ...(policy.family ? { family: policy.family } : {}),
    ...(organisation ? { organisation } : {}),
    ...(policy.environments?.[0] ? { environment: policy.environments[0] } : {}),
    ...(policy.bindings ? { bindings: policy.bindings } : {}),
    ...(policy.lifecycle ? { lifecycle: policy.lifecycle } : {}),
    ...(policy.availability ? { availability: policy.availability } : {}),
    ...(policy.claims ? { evidence: policy.claims.map((c) => ({ claim: c.claim, maxAge: c.max_age })) } : {}),
    ...(policy.status_max_age !== undefined ? { statusMaxAge: policy.status_max_age } : {}),
    consequence: policy.consequence ?? "lower",
    ...(request.baseUrl ? { baseUrl: request.baseUrl } : {}),
    ...(request.statusToken ? { statusToken: request.statusToken } : {}),
    ...(request.record ? { record: request.record } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
  });
  const decision = policy.outcomes?.[outcome.outcome] ?? NEXT[outcome.next_step] ?? "deny";
  const relied = outcome.relied_on;
  return {
    decision,
    outcome,
    receipt: {
      receipt_format: "svc.passport_decision",
      version: 1,
      decided_at: new Date().toISOString(),
      action: request.action,
      policy_digest: "sha-256:stub",
      decision,
      outcome: outcome.outcome,
      subject: {
        identity_id: identityId,
        ...(relied.record_version !== undefined ? { record_version: relied.record_version } : {}),
        ...(relied.digest ? { digest: relied.digest } : {}),
      },
      checks: [{ check: "passport", result: outcome.ok ? "passed" : "failed", detail: outcome.outcome }],
    },
  };
}
