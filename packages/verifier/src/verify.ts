/**
 * The pre-call check (`Verifier.verify`, spec 4.6 steps 2 to 4): a stapled status token first,
 * then the record under the expectation's consequence, the current proof at `higher`, and the
 * comparison with what the decision needs (checks.ts).
 */
import { evaluate } from "./checks.ts";
import type { VerifierContext } from "./context.ts";
import {
  type CurrentProof,
  checkStapled,
  currentProof,
  DEFAULT_STATUS_MAX_AGE_SECONDS,
  issuancePending,
} from "./current-proof.ts";
import { type DecisionExpectation, requireDuration } from "./expectation.ts";
import { type OkSignatureSkipped, outcome, type VerifyOutcome } from "./outcome.ts";
import type { PassportRecordView } from "./record.ts";
import { resolveRecord } from "./resolve-record.ts";

/** What the check returns to `decide`: the outcome, and the record and status token it rested on. */
export interface Verified {
  outcome: VerifyOutcome;
  record?: PassportRecordView;
  statusToken?: string;
}

/** {@link Verifier.verify}, also returning the record decided on and the status token relied on (for `decide`). */
export async function verifyRecord(
  context: VerifierContext,
  identityId: string,
  expectation: DecisionExpectation,
): Promise<Verified> {
  // A malformed expectation is the caller's bug: refuse it before any request, never as an outcome.
  for (const requirement of expectation.evidence ?? []) {
    if (typeof requirement !== "string" && requirement.maxAge !== undefined) {
      requireDuration(requirement.maxAge, `evidence ${requirement.claim} maxAge`);
    }
  }
  const statusMaxAge =
    expectation.statusMaxAge === undefined
      ? DEFAULT_STATUS_MAX_AGE_SECONDS
      : requireDuration(expectation.statusMaxAge, "statusMaxAge");
  // A stapled token checked before the record is fetched: when it names a published version, a
  // cached copy of that version needs no request, and the log check may take it as the newest
  // instead of scanning (docs/verifier.md, Current proof and Transparency log).
  // The trusted keys are looked up (and, from a URL, read) once for the whole decision.
  const keys = context.keys.once(identityId, expectation.signal);
  const stapled =
    expectation.consequence === "higher" && expectation.statusToken
      ? await checkStapled(context, {
          identityId,
          token: expectation.statusToken,
          keys: await keys(),
          maxAgeSeconds: statusMaxAge,
        })
      : undefined;
  const named =
    stapled?.ok &&
    stapled.kid !== undefined &&
    stapled.claims.publication === "published" &&
    stapled.claims.record_version !== undefined &&
    stapled.claims.digest !== undefined
      ? { record_version: stapled.claims.record_version, digest: stapled.claims.digest }
      : undefined;
  const result = await resolveRecord(
    context,
    identityId,
    {
      ...(expectation.consequence ? { consequence: expectation.consequence } : {}),
      ...(expectation.maxAge !== undefined ? { maxAge: expectation.maxAge } : {}),
      ...(expectation.signal ? { signal: expectation.signal } : {}),
      ...(expectation.history ? { history: true } : {}),
      ...(expectation.seen ? { seen: expectation.seen } : {}),
      ...(expectation.record ? { record: expectation.record } : {}),
    },
    { current: named, keys },
  );
  if (result.outcome === "not_found") {
    return { outcome: await issuancePending(context, result, await keys(), expectation.signal) };
  }
  if (result.outcome !== "resolved") return { outcome: result };
  // Higher consequence: the record must be the one the service's current state names (docs/verifier.md, Current proof).
  let current: CurrentProof = {};
  if (expectation.consequence === "higher") {
    const proven = await currentProof(context, {
      identityId,
      record: result.record,
      expectation,
      maxAgeSeconds: statusMaxAge,
      stapled: stapled,
      keys: await keys(),
    });
    if ("network" in proven) return { outcome: proven.network, record: result.record };
    current = proven;
    if (current.proof) result.proof.status = current.proof;
  }
  const currentAsOf = current.proof && !current.stale ? { current_as_of: current.proof.issued_at } : {};
  const verdict = {
    ...evaluate(result.record, expectation, result.source, context.now(), current.stale),
    ...currentAsOf,
  };
  const relied = { record: result.record, ...(current.token && current.proof ? { statusToken: current.token } : {}) };
  if (verdict.outcome === "ok" && result.proof.signature !== "verified") {
    const { ok: _, identity_is_not_authorization: __, authorization_note: ___, findings: ____, ...rest } = verdict;
    const skipped: VerifyOutcome = {
      ...outcome<OkSignatureSkipped>({
        ...rest,
        outcome: "ok_signature_skipped",
        next_step: "challenge",
        reason:
          "The record meets every stated expectation, but its signature was NOT checked (signature: skip-insecure): anyone between you and the resolver could have written it. Do not rely on it where a forged record matters; pin the service's keys (jwks) instead.",
      }),
      proof: result.proof,
    };
    return { outcome: skipped, ...relied };
  }
  return { outcome: { ...verdict, proof: result.proof }, ...relied };
}
