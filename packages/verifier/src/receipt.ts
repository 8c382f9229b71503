/**
 * The decision receipt (docs/verifier.md, Receipt): what one decision relied on, small enough to
 * log per call, and re-checkable later against the transparency log.
 */
import type { OutcomeClass } from "./outcome.ts";
import type { Decision } from "./policy.ts";

export const RECEIPT_FORMAT = "svc.passport_decision";
export const RECEIPT_VERSION = 1;

/** The checks a receipt lists, in this order. */
export const RECEIPT_CHECKS = [
  "record",
  "signature",
  "history",
  "log",
  "status",
  "family",
  "organisation",
  "state",
  "environment",
  "version",
  "bindings",
  "evidence",
  "freshness",
  "authority",
] as const;
export type ReceiptCheckName = (typeof RECEIPT_CHECKS)[number];

export interface ReceiptCheck {
  check: ReceiptCheckName | (string & {});
  result: "passed" | "failed" | "not_checked";
  /** A short word or phrase: the failing outcome, the authority result, the grant relied on. */
  detail?: string;
}

/** One side of a decision: the passport decided on, and the proof it rested on. */
export interface ReceiptSide {
  identity_id: string;
  record_version?: number;
  /** The record's digest (`sha-256:...`), as signed. */
  digest?: string;
  /** The key that signed the record. */
  kid?: string;
  /** The record's log entry and the signed checkpoint that included it (with the verifier's `log`). */
  log?: { origin: string; index: number; size: number; root_hash: string };
  /** The status token relied on at `higher` consequence: its issue time, key, and the SHA-256 of the token. */
  status?: { issued_at: string; kid?: string; digest: string };
}

export interface DecisionReceipt {
  receipt_format: typeof RECEIPT_FORMAT;
  version: typeof RECEIPT_VERSION;
  decided_at: string;
  action: string;
  policy_digest: string;
  decision: Decision;
  outcome: OutcomeClass;
  /** The passport decided on (the API for a consumer; the caller for a provider). */
  subject: ReceiptSide;
  /** Reciprocal trust: the calling agent's side. */
  caller?: ReceiptSide;
  checks: ReceiptCheck[];
}

export interface ReceiptCheckResult {
  ok: boolean;
  /** One sentence per problem; empty when `ok`. */
  problems: string[];
}
