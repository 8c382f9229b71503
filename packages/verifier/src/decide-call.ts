// Reciprocal trust (docs/reciprocal-trust.md): one decision over both sides of a call. The API's
// passport is decided as `decide` does under the action's policy; the calling agent's passport must
// have signed the request with a key the service proved for it, pass the action's `caller` policy
// (state, status token at higher, organisation, authority), and, when asked, declare the API in
// its `uses` links. One decision, one outcome, one receipt with the findings of each side.
import type { Decision } from "@passport/protocol";
import {
  type CallerSignatureCheck,
  type CallerSignatures,
  DEFAULT_SIGNATURE_WINDOW_SECONDS,
  type LookupBudget,
  type NonceStore,
  PASSPORT_AGENT_HEADER,
} from "./caller.ts";
import type { VerifierContext } from "./context.ts";
import { type DecisionResult, decide } from "./decide.ts";
import { requireDuration, type SuppliedRecord } from "./expectation.ts";
import type { VerifyOutcome } from "./outcome.ts";
import { type ActionPolicy, actionPolicyFor, type CallerPolicy, type PolicyDocument } from "./policy.ts";
import type { DecisionReceipt, ReceiptSide } from "./receipt.ts";
import type { PassportRecordView } from "./record.ts";
import { STATUS_HEADER } from "./status.ts";
import { coveredBy } from "./url-match.ts";

export interface DecideCallRequest {
  policy: PolicyDocument;
  action: string;
  /** The API's side: its passport, the address called, its stapled status token, a supplied record. */
  api: { identityId: string; baseUrl?: string; statusToken?: string; record?: SuppliedRecord };
  /**
   * The caller's side: the request as received, signed per RFC 9421 / Web Bot Auth. Its passport
   * is `identityId`, else the request's `Passport-Agent` header; its status token `statusToken`,
   * else the request's `Passport-Status` header.
   */
  caller?: {
    request: Request;
    identityId?: string;
    statusToken?: string;
    /**
     * The public origin of this API (`https://api.example`): a signature counts only when the
     * request's address, whose authority it signed, is at this origin. Without it, the address
     * must be covered by one of the API passport's verified, fresh endpoint bindings.
     */
    origin?: string;
    /** Who sent the request (an address), for `lookups`. */
    client?: string;
    /** Refuses a nonce seen before within its window (`signature_replayed`), and a signature without one. */
    nonces?: NonceStore;
  };
  /**
   * Bounds the lookups of the calling passport that requests not verified yet may cause (a
   * request signed by a key already proven for the passport it names spends nothing). Default: unbounded.
   */
  lookups?: LookupBudget;
  amount?: { value: string; currency: string };
  resource?: string;
  signal?: AbortSignal;
  /** Checks the caller's signature; default the verifier's `callerSignatures`. */
  signatures?: CallerSignatures;
}

/** The caller's side of a call decision: its passport's outcome, and the signature that named it. */
export type CallerOutcome = VerifyOutcome & {
  signature?: { keyid: string; thumbprint: string; created: string; expires?: string };
};

export interface CallDecisionResult extends DecisionResult {
  sides: { api: VerifyOutcome; caller?: CallerOutcome };
  /** Why the caller's side failed, when it did before its passport was decided (for the provider's answer). */
  caller_problem?: { check: string; problem: string; detail: string };
}

type Check = DecisionReceipt["checks"][number];

/** Most severe first: a refusal outranks a challenge, a challenge a retry, a retry an allow. */
const SEVERITY: Decision[] = ["deny", "challenge", "re-resolve", "delay", "allow"];
const worst = (decisions: Decision[]): Decision => SEVERITY.find((decision) => decisions.includes(decision)) ?? "allow";

const SIGNATURE_DECISION: Record<Exclude<CallerSignatureCheck, { ok: true }>["problem"], Decision> = {
  signature_missing: "challenge",
  signature_invalid: "deny",
  signature_expired: "challenge",
  signature_replayed: "deny",
  key_not_proven: "deny",
  key_unavailable: "delay",
  lookups_exhausted: "delay",
};

/** The `@authority` a request to `url` is signed with (the default port dropped by the URL parser). */
const authorityOf = (url: URL) => url.host;

/**
 * Whether the request's address is this API's: at its configured public origin, else covered by
 * a verified, fresh endpoint binding of the API's passport. The signature covers the address's
 * authority, so a signature made for another API does not count here.
 */
function addressedToThisApi(
  url: URL,
  origin: string | undefined,
  api: PassportRecordView | undefined,
  now: number,
): boolean {
  if (origin !== undefined) {
    const own = new URL(origin);
    return own.protocol === url.protocol && authorityOf(own) === authorityOf(url);
  }
  return (api?.bindings ?? []).some(
    (binding) =>
      binding.class === "endpoint" &&
      binding.verification?.state === "verified" &&
      Date.parse(binding.verification.fresh_until ?? "") > now &&
      coveredBy(url.href, binding.value),
  );
}

/** The caller's requirements as a policy of one action, decided on the caller's passport. */
function callerPolicyDocument(action: string, outer: ActionPolicy, caller: CallerPolicy): PolicyDocument {
  return {
    policy_format: "svc.passport_policy",
    version: 1,
    actions: {
      [action]: {
        consequence: caller.consequence ?? outer.consequence ?? "lower",
        family: caller.family ?? "agent",
        ...(caller.organisations ? { organisations: caller.organisations } : {}),
        ...(caller.authority ? { authority: caller.authority } : {}),
        ...(outer.status_max_age !== undefined ? { status_max_age: outer.status_max_age } : {}),
      },
    },
  };
}

function prefixed(checks: Check[], side: string): Check[] {
  return checks.map((check) => ({ ...check, check: `${side}.${check.check}` }));
}

/**
 * Decides a call over both sides (see {@link DecideCallRequest}); the `Verifier.decideCall` method.
 * `configured`: the verifier's `callerSignatures`, used unless the request names its own.
 */
export async function decideCall(
  context: VerifierContext,
  request: DecideCallRequest,
  configured: CallerSignatures | undefined,
): Promise<CallDecisionResult> {
  const outer = actionPolicyFor(request.policy, request.action);
  const callerPolicy = outer.caller;
  const windowSeconds =
    callerPolicy?.signature_window === undefined
      ? DEFAULT_SIGNATURE_WINDOW_SECONDS
      : requireDuration(callerPolicy.signature_window, "caller.signature_window");
  const common = {
    ...(request.amount ? { amount: request.amount } : {}),
    ...(request.resource ? { resource: request.resource } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
  };
  const { result: api, record: apiRecord } = await decide(context, request.api.identityId, {
    policy: request.policy,
    action: request.action,
    ...(request.api.baseUrl ? { baseUrl: request.api.baseUrl } : {}),
    ...(request.api.statusToken ? { statusToken: request.api.statusToken } : {}),
    ...(request.api.record ? { record: request.api.record } : {}),
    ...common,
  });
  const checks: Check[] = [...api.receipt.checks];
  const finish = (
    decision: Decision,
    outcome: VerifyOutcome,
    caller?: { side: ReceiptSide; outcome: CallerOutcome },
    problem?: CallDecisionResult["caller_problem"],
  ): CallDecisionResult => ({
    decision,
    outcome,
    receipt: {
      ...api.receipt,
      decided_at: new Date(context.now()).toISOString(),
      decision,
      outcome: outcome.outcome,
      ...(caller ? { caller: caller.side } : {}),
      checks,
    },
    sides: { api: api.outcome, ...(caller ? { caller: caller.outcome } : {}) },
    ...(problem ? { caller_problem: problem } : {}),
  });

  const incoming = request.caller?.request;
  const signed = incoming?.headers.has("signature-input") ?? false;
  if (!callerPolicy || (!callerPolicy.required && !signed)) {
    checks.push({ check: "caller", result: "not_checked", detail: callerPolicy ? "not signed" : "no caller policy" });
    return finish(api.decision, api.outcome);
  }
  const refuse = (
    check: string,
    problem: string,
    detail: string,
    decision: Decision,
    caller?: { side: ReceiptSide; outcome: CallerOutcome },
  ) => {
    checks.push({ check, result: "failed", detail: problem });
    return finish(worst([api.decision, decision]), api.outcome, caller, { check, problem, detail });
  };
  const callerId = request.caller?.identityId ?? incoming?.headers.get(PASSPORT_AGENT_HEADER) ?? undefined;
  if (!incoming || !signed || !callerId) {
    return refuse(
      "caller.signature",
      "signature_missing",
      `This action needs a request signed by the calling agent, naming its passport in ${PASSPORT_AGENT_HEADER}.`,
      "challenge",
    );
  }
  const signatures = request.signatures ?? configured;
  if (!signatures) {
    throw new TypeError(
      "caller signatures: no checker configured (pass `signatures`, e.g. webBotAuth() from @passport/verifier/provider)",
    );
  }

  // What the signature headers alone refuse is refused before the calling passport is looked up,
  // so a request that could never be accepted costs no resolver read.
  const screened = signatures.screen?.(incoming, { windowSeconds, now: context.now() });
  if (screened) {
    return refuse("caller.signature", screened.problem, screened.detail, SIGNATURE_DECISION[screened.problem]);
  }
  if (!apiRecord && request.caller?.origin === undefined) {
    // Without its own record the API knows no address of its own: its side decides (not `allow`).
    checks.push({ check: "caller", result: "not_checked", detail: "the API's own passport was not established" });
    return finish(api.decision === "allow" ? "delay" : api.decision, api.outcome);
  }
  if (!addressedToThisApi(new URL(incoming.url), request.caller?.origin, apiRecord, context.now())) {
    return refuse(
      "caller.signature",
      "signature_invalid",
      "The request was signed for another address than this API's.",
      "deny",
    );
  }
  // A signature by a key already known is verified now, before any lookup: a forged one is
  // refused for nothing, and one by a key proven for this passport before spends no budget.
  const known = await signatures.verifyKnown?.(incoming, { identityId: callerId, windowSeconds, now: context.now() });
  if (typeof known === "object") {
    return refuse("caller.signature", known.problem, known.detail, SIGNATURE_DECISION[known.problem]);
  }
  const spends = known !== "verified" && request.lookups !== undefined;
  if (spends && !request.lookups?.take(request.caller?.client, context.now())) {
    return refuse(
      "caller.signature",
      "lookups_exhausted",
      "The signing key is not known here yet and the lookups unverified requests may cause are spent for now.",
      "delay",
    );
  }

  // The caller's passport under the caller policy; then its signature, against the record decided on.
  const decided = await decide(context, callerId, {
    policy: callerPolicyDocument(request.action, outer, callerPolicy),
    action: request.action,
    ...((request.caller?.statusToken ?? incoming.headers.get(STATUS_HEADER))
      ? { statusToken: request.caller?.statusToken ?? (incoming.headers.get(STATUS_HEADER) as string) }
      : {}),
    ...common,
  });
  const callerDecision = decided.result;
  checks.push(...prefixed(callerDecision.receipt.checks, "caller"));
  const side = callerDecision.receipt.subject;
  let callerOutcome: CallerOutcome = callerDecision.outcome;
  const record = decided.record;
  if (!record) {
    // No record to read keys from (not found, unreachable, disproved): the passport's own outcome says why.
    checks.push({ check: "caller.signature", result: "not_checked" });
    const failed = callerDecision.receipt.checks.find((check) => check.result === "failed");
    return finish(
      worst([api.decision, callerDecision.decision]),
      api.decision !== "allow" ? api.outcome : callerDecision.outcome,
      { side, outcome: callerOutcome },
      {
        check: failed ? `caller.${failed.check}` : "caller.passport",
        problem: callerDecision.outcome.outcome,
        detail: "The calling agent's passport could not be established.",
      },
    );
  }
  const signature = await signatures.check(incoming, record, {
    windowSeconds,
    now: context.now(),
    ...(common.signal ? { signal: common.signal } : {}),
    ...(request.caller?.nonces ? { nonces: request.caller.nonces } : {}),
  });
  if (!signature.ok) {
    // The receipt names the caller's record whose keys the signature was checked against.
    return refuse(
      "caller.signature",
      signature.problem,
      signature.detail,
      worst([callerDecision.decision, SIGNATURE_DECISION[signature.problem]]),
      { side, outcome: callerOutcome },
    );
  }
  if (spends) request.lookups?.refund?.(request.caller?.client);
  checks.push({ check: "caller.signature", result: "passed", detail: `keyid ${signature.keyid}` });
  callerOutcome = {
    ...callerOutcome,
    signature: {
      keyid: signature.keyid,
      thumbprint: signature.thumbprint,
      created: signature.created,
      ...(signature.expires ? { expires: signature.expires } : {}),
    },
  };

  const decisions: Decision[] = [api.decision, callerDecision.decision];
  let problem: CallDecisionResult["caller_problem"];
  if (callerPolicy.uses_link) {
    const uses = record.uses ?? [];
    if (uses.some((link) => link.identity_id === request.api.identityId)) {
      checks.push({ check: "caller.uses_link", result: "passed" });
    } else {
      checks.push({ check: "caller.uses_link", result: "failed", detail: "link_missing" });
      decisions.push("deny");
      problem = {
        check: "caller.uses_link",
        problem: "link_missing",
        detail: "The calling passport does not declare this API among the passports it uses.",
      };
    }
  } else {
    checks.push({ check: "caller.uses_link", result: "not_checked" });
  }
  if (!problem && callerDecision.decision !== "allow") {
    const failed = callerDecision.receipt.checks.find((check) => check.result === "failed");
    problem = {
      check: failed ? `caller.${failed.check}` : "caller.passport",
      problem: callerDecision.outcome.outcome,
      detail: "The calling agent's passport does not meet this action's policy.",
    };
  }
  const decision = worst(decisions);
  const outcome = api.decision !== "allow" ? api.outcome : callerDecision.outcome;
  return finish(decision, outcome, { side, outcome: callerOutcome }, problem);
}
