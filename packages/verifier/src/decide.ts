/**
 * `Verifier.decide`: today's pre-call check with the expectation a policy gives for an action,
 * structured authority, and a decision receipt (docs/policy.md).
 */
import type { SuppliedRecord } from "./expectation.ts";
import type { SeenVersion, VerifyOutcome } from "./outcome.ts";
import type { Decision, PolicyDocument } from "./policy.ts";
import type { DecisionReceipt } from "./receipt.ts";

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

/**
 * How the record's structured authority answers the policy's required authority: `held`;
 * `not_held` (no grant covers the action, resource or amount); `expired`; `not_entitled` (granted
 * by someone the policy does not accept); `not_established` (only legacy free-text entries).
 */
export type AuthorityResult = "held" | "not_held" | "expired" | "not_entitled" | "not_established";

export interface AuthorityCheck {
  result: AuthorityResult;
  /** The action asked for (the policy's `authority.action`, else the action's name). */
  action: string;
  /** The grant relied on (held) or the closest one that failed, by its position in `authority[]`. */
  grant?: number;
  detail: string;
}

export interface DecisionResult {
  decision: Decision;
  /** Today's outcome, unchanged in meaning. */
  outcome: VerifyOutcome;
  receipt: DecisionReceipt;
  /** Present when the policy requires authority and the record was read. */
  authority?: AuthorityCheck;
}
