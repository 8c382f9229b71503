/**
 * The decision receipt (docs/verifier.md, Receipt): what one decision relied on, small enough to
 * log per call, and re-checkable later against the transparency log.
 */

import {
  base64urlEncode,
  type Decision,
  decodeEntry,
  OUTCOME_KINDS,
  type OutcomeClass,
  RECEIPT_CHECKS,
  RECEIPT_FORMAT,
  RECEIPT_VERSION,
  type ReceiptCheckName,
  sha256,
} from "@passport/protocol";
import type { AuthorityCheck } from "./authority.ts";
import type { DecisionExpectation } from "./expectation.ts";
import { type CheckpointCheck, type LogClient, LogFetchError } from "./log/client.ts";
import type { VerifyOutcome } from "./outcome.ts";
import { type PolicyDocument, policyDigest } from "./policy.ts";
import type { PassportRecordView } from "./record.ts";

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

const FAILED_BY: Partial<Record<OutcomeClass, ReceiptCheckName>> = {
  not_found: "record",
  malformed_id: "record",
  network_failure: "record",
  signature_invalid: "signature",
  unknown_key: "signature",
  history_broken: "history",
  family_mismatch: "family",
  organisation_mismatch: "organisation",
  state_not_operative: "state",
  binding_mismatch: "bindings",
  binding_unverified: "bindings",
  missing_evidence: "evidence",
  stale: "freshness",
};

function checkOf(outcome: OutcomeClass): ReceiptCheckName | undefined {
  if (FAILED_BY[outcome]) return FAILED_BY[outcome];
  return OUTCOME_KINDS[outcome] === "disproved" || outcome === "checkpoint_stale" || outcome === "newest_unverified"
    ? "log"
    : undefined;
}

/** The SHA-256 of a compact token's text, as `sha-256:<base64url>`. */
export async function tokenDigest(token: string): Promise<string> {
  return `sha-256:${base64urlEncode(sha256(new TextEncoder().encode(token)))}`;
}

export interface ReceiptInput {
  identityId: string;
  action: string;
  policy: PolicyDocument;
  decision: Decision;
  outcome: VerifyOutcome;
  expectation: DecisionExpectation;
  record?: PassportRecordView;
  statusToken?: string;
  authority?: AuthorityCheck | "not_checked";
  now: number;
}

/** The side of a receipt for the passport decided on: what was relied on, by reference. */
export async function receiptSide(
  identityId: string,
  outcome: VerifyOutcome,
  record: PassportRecordView | undefined,
  statusToken: string | undefined,
): Promise<ReceiptSide> {
  const proof = outcome.proof;
  const status = proof?.status;
  return {
    identity_id: identityId,
    ...(record?.record_version !== undefined ? { record_version: record.record_version } : {}),
    ...(record?.digest ? { digest: record.digest } : {}),
    ...(proof?.kid ? { kid: proof.kid } : {}),
    ...(proof?.log
      ? {
          log: {
            origin: proof.log.checkpoint.origin,
            index: proof.log.index,
            size: proof.log.checkpoint.size,
            root_hash: proof.log.checkpoint.root_hash,
          },
        }
      : {}),
    ...(status && statusToken
      ? {
          status: {
            issued_at: status.issued_at,
            ...(status.kid ? { kid: status.kid } : {}),
            digest: await tokenDigest(statusToken),
          },
        }
      : {}),
  };
}

/** Each check of the receipt: failed (the outcome's class, or one of its findings), passed, or not checked. */
function receiptChecks(input: ReceiptInput): ReceiptCheck[] {
  const { outcome, expectation, record } = input;
  const policy = expectation.policy ?? {};
  const failed = new Map<string, string>();
  for (const finding of outcome.findings.length > 0 ? outcome.findings : [outcome]) {
    if (finding.outcome === "environment_or_version_mismatch") {
      for (const m of finding.mismatches)
        failed.set(m.field, `${m.actual ?? "not stated"}${m.binding ? ` (${m.binding.class})` : ""}`);
      continue;
    }
    const check = checkOf(finding.outcome);
    if (check && !failed.has(check)) failed.set(check, finding.outcome);
  }
  const evaluated = record !== undefined && OUTCOME_KINDS[outcome.outcome] !== "disproved";
  const proof = outcome.proof;
  const constrained: Record<string, boolean> = {
    record: true,
    signature: proof?.signature === "verified",
    history: proof !== undefined && proof.history !== "not_checked",
    log: proof?.log !== undefined,
    status: proof?.status !== undefined,
    family: evaluated && expectation.family !== undefined,
    organisation: evaluated && (policy.organisations !== undefined || expectation.organisation !== undefined),
    state: evaluated,
    environment: evaluated && (policy.environments !== undefined || expectation.environment !== undefined),
    version: evaluated && (policy.versions !== undefined || expectation.version !== undefined),
    bindings: evaluated && (expectation.baseUrl !== undefined || (expectation.bindings ?? []).length > 0),
    evidence: evaluated && (expectation.evidence ?? []).length > 0,
    freshness: evaluated,
  };
  const checks: ReceiptCheck[] = [];
  for (const name of RECEIPT_CHECKS) {
    if (name === "authority") {
      const authority = input.authority;
      if (authority === undefined) continue;
      checks.push(
        authority === "not_checked"
          ? { check: name, result: "not_checked" }
          : { check: name, result: authority.result === "held" ? "passed" : "failed", detail: authority.result },
      );
      continue;
    }
    const failure = failed.get(name);
    if (failure) checks.push({ check: name, result: "failed", detail: failure });
    else checks.push({ check: name, result: constrained[name] ? "passed" : "not_checked" });
  }
  return checks;
}

/** The receipt of one decision (docs/verifier.md, Receipt). */
export async function buildReceipt(input: ReceiptInput): Promise<DecisionReceipt> {
  return {
    receipt_format: RECEIPT_FORMAT,
    version: RECEIPT_VERSION,
    decided_at: new Date(input.now).toISOString(),
    action: input.action,
    policy_digest: await policyDigest(input.policy),
    decision: input.decision,
    outcome: input.outcome.outcome,
    subject: await receiptSide(input.identityId, input.outcome, input.record, input.statusToken),
    checks: receiptChecks(input),
  };
}

export interface VerifyReceiptOptions {
  /**
   * A `Verifier` configured with the transparency log (`log`) the receipt's entries are in; only
   * its log is used.
   */
  verifier: { transparencyLog(): Promise<LogClient | undefined> };
  /** The policy the decision was made under: its digest must equal the receipt's. */
  policy?: PolicyDocument;
  /** The status token kept with the receipt: its digest must equal the receipt's. */
  statusToken?: string;
  signal?: AbortSignal;
}

const BUNDLE_WIDTH = 256;

/** Re-checks one side's record reference against the log as it is signed now (`current`, read once). */
async function checkSide(
  side: ReceiptSide,
  name: string,
  against: { client: LogClient | undefined; current: () => Promise<CheckpointCheck>; signal: AbortSignal | undefined },
): Promise<string[]> {
  const { client, current, signal } = against;
  const log = side.log;
  if (!log) return [`the ${name} names no log entry, so it cannot be checked against the log`];
  if (!client) return ["the verifier has no transparency log configured (its log option)"];
  if (side.record_version === undefined || !side.digest) return [`the ${name} names no record version and digest`];
  if (log.origin !== client.origin) return [`the ${name}'s log ${log.origin} is not the pinned log ${client.origin}`];
  const read = await current();
  if (!read.ok) return [`the log's current checkpoint is not valid (${read.problem})`];
  const checkpoint = read.checkpoint;
  const root = base64Decode(log.root_hash);
  if (root?.length !== 32) return [`the ${name}'s checkpoint root hash is not a SHA-256 hash`];
  if (!Number.isSafeInteger(log.index) || log.index < 0 || log.index >= log.size) {
    return [`the ${name}'s log index ${log.index} is not within its checkpoint of ${log.size} entries`];
  }
  const advance = await client.advance({ size: log.size, rootHash: root }, checkpoint, signal);
  if (advance.outcome !== "unchanged" && advance.outcome !== "extended") {
    return [
      `the ${name}'s checkpoint (${log.size} entries) is not part of the log as signed now (${advance.outcome}, ${checkpoint.size} entries)`,
    ];
  }
  const n = Math.floor(log.index / BUNDLE_WIDTH);
  const bundle = await client.bundle(checkpoint, n, signal);
  if (!bundle.ok) return [`the log's entries around ${log.index} could not be proved: ${bundle.detail}`];
  const bytes = bundle.bundle.entries[log.index - bundle.bundle.first];
  const entry = bytes ? decodeEntry(bytes) : undefined;
  if (
    entry?.identityId !== side.identity_id ||
    entry.recordVersion !== side.record_version ||
    entry.digest !== side.digest
  ) {
    return [
      `the log's entry ${log.index} is not version ${side.record_version} (${side.digest}) of ${side.identity_id}`,
    ];
  }
  return [];
}

function base64Decode(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * Re-checks a receipt later: each side's record version and digest must be the log's entry at the
 * receipt's index, in a checkpoint the log as signed now extends (so the receipt's checkpoint is
 * the log's). With `policy` or `statusToken`, their digests must equal the receipt's. The receipt
 * itself is not signed: keep it where you keep audit records; this check shows that what it says
 * it relied on was published. A log that cannot be read is a problem in the answer, never a
 * rejection; both sides are checked against one reading of the log's checkpoint.
 * @example
 * const { ok, problems } = await verifyReceipt(receipt, { verifier });
 */
export async function verifyReceipt(
  receipt: DecisionReceipt,
  options: VerifyReceiptOptions,
): Promise<ReceiptCheckResult> {
  const problems: string[] = [];
  if (receipt?.receipt_format !== RECEIPT_FORMAT || receipt.version !== RECEIPT_VERSION) {
    return { ok: false, problems: [`not a ${RECEIPT_FORMAT} receipt of version ${RECEIPT_VERSION}`] };
  }
  if (options.policy && (await policyDigest(options.policy)) !== receipt.policy_digest) {
    problems.push("the policy given is not the one the decision was made under (its digest differs)");
  }
  if (
    options.statusToken !== undefined &&
    (await tokenDigest(options.statusToken)) !== receipt.subject.status?.digest
  ) {
    problems.push("the status token given is not the one the decision relied on (its digest differs)");
  }
  const client = await options.verifier.transparencyLog();
  // Both sides are checked against the one checkpoint the log serves now, read once.
  let checkpoint: Promise<CheckpointCheck> | undefined;
  const current = () => {
    checkpoint ??= (client as LogClient).checkpoint(options.signal);
    return checkpoint;
  };
  try {
    const against = { client, current, signal: options.signal };
    problems.push(...(await checkSide(receipt.subject, "subject", against)));
    if (receipt.caller) problems.push(...(await checkSide(receipt.caller, "caller", against)));
  } catch (error) {
    // The log could not be read: the receipt is not shown to be published, which is a problem, not a crash.
    if (!(error instanceof LogFetchError)) throw error;
    problems.push(`the log could not be read at ${error.url} (${error.failure.kind}): ${error.failure.detail}`);
  }
  return { ok: problems.length === 0, problems };
}
