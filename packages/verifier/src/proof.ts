import {
  canonicalMembers,
  digestOfCanonical,
  joinMembers,
  verifyDetachedJws,
  verifyDetachedJwsOver,
  withMember,
} from "@passport/protocol";
import type { KeyRing } from "./keys.ts";
import type {
  HistoryBrokenFinding,
  HistoryProblem,
  Proof,
  ReliedOn,
  SeenVersion,
  SignatureInvalidFinding,
  SignatureProblem,
  StaleFinding,
  UnknownKeyFinding,
} from "./outcome.ts";
import { propagating, withinPropagation } from "./propagation.ts";
import type { PassportRecordView } from "./record.ts";
import { VerifiedMemo } from "./verified-memo.ts";

/** A failed proof, or (`stale`) pieces of it that publication in progress explains (propagation.ts). */
export type ProofFinding = SignatureInvalidFinding | UnknownKeyFinding | HistoryBrokenFinding | StaleFinding;
export type ProofCheck = { ok: true; proof: Proof } | { ok: false; finding: ProofFinding };

/** One entry of a passport's published history, as served (docs/signing.md). */
export interface HistoryEntryView {
  identity_id: string;
  record_version: number;
  digest: string;
  previous_digest?: string;
  published_at: string;
  change_kinds: string[];
  signature: string;
}

/** The members a proof decision relies on: which version of which record was judged. */
function proofReliedOn(record: PassportRecordView): ReliedOn {
  const relied: ReliedOn = { identity_id: record.identity_id };
  if (record.record_version !== undefined) relied.record_version = record.record_version;
  if (record.digest !== undefined) relied.digest = record.digest;
  if (record.previous_digest !== undefined) relied.previous_digest = record.previous_digest;
  return relied;
}

const SIGNATURE_REASONS: Record<SignatureProblem, string> = {
  missing: "The resolver's answer carries no Passport-Signature, and a signature is required.",
  malformed: "The record's Passport-Signature is not a detached ES256 JWS.",
  mismatch: "The record's signature does not match its content: the record or its signature was altered.",
  digest_mismatch: "The record's content does not match its own digest: the record was altered after publication.",
  duplicate_member:
    "The record's JSON repeats a member name, so it reads differently in different parsers and its signature covers only one reading.",
};

/** A record whose JSON repeats a member name: refused before its signature is checked, relying on nothing in it. */
export function ambiguousRecord(identityId: string, problem: string): ProofFinding {
  return {
    ...signatureInvalid({ identity_id: identityId } as PassportRecordView, "duplicate_member", { detail: problem }),
    relied_on: {},
  };
}

function signatureInvalid(
  record: PassportRecordView,
  kind: SignatureProblem,
  extra: Partial<SignatureInvalidFinding> = {},
): ProofFinding {
  return {
    outcome: "signature_invalid",
    next_step: "deny",
    reason: `${SIGNATURE_REASONS[kind]} Do not rely on it; fetch it again from the official resolver over a path you trust, and report it if it persists.`,
    relied_on: proofReliedOn(record),
    kind,
    ...extra,
  };
}

function unknownKey(
  record: PassportRecordView,
  found: { kid: string; keys: KeyRing; signed: UnknownKeyFinding["signed"]; version?: number },
): ProofFinding {
  const { kid, keys, signed, version } = found;
  const what = signed === "record" ? "The record" : `The history entry for version ${version}`;
  return {
    outcome: "unknown_key",
    next_step: "challenge",
    reason: `${what} is signed with key ${kid}, which your trusted keys (${keys.kids.join(", ") || "none"}) do not list. If the service rotated its keys, update your pinned key set from a source you trust; if the key was retired, what it signed is no longer to be relied on.`,
    relied_on: proofReliedOn(record),
    kid,
    trusted_kids: keys.kids,
    signed,
    ...(version !== undefined ? { record_version: version } : {}),
  };
}

const HISTORY_STEPS: Record<HistoryProblem, HistoryBrokenFinding["next_step"]> = {
  rollback: "re-resolve",
  not_in_history: "re-resolve",
  fork: "deny",
  gap: "deny",
  entry_signature_invalid: "deny",
};

function historyBroken(
  record: PassportRecordView,
  found: {
    kind: HistoryProblem;
    at: number;
    against: HistoryBrokenFinding["against"];
    detail: string;
    digests?: { expected?: string; actual?: string };
  },
): ProofFinding {
  const { kind, at, against, detail, digests = {} } = found;
  const advice =
    HISTORY_STEPS[kind] === "re-resolve"
      ? "Re-resolve from the official resolver (a cache may briefly serve an older copy); if it persists, do not rely on it."
      : "Do not rely on this passport's proof; report it to the service.";
  return {
    outcome: "history_broken",
    next_step: HISTORY_STEPS[kind],
    reason: `The chain of published versions is broken: ${detail}. ${advice}`,
    relied_on: proofReliedOn(record),
    kind,
    at_version: at,
    ...digests,
    against,
    detail,
  };
}

function lagging(
  record: PassportRecordView,
  found: { behind: "record" | "history"; newer: number; publishedAt: string | undefined; what: string },
): ProofFinding {
  const { behind, newer, publishedAt, what } = found;
  return propagating(
    proofReliedOn(record),
    { lagging: behind, newer_version: newer, ...(publishedAt ? { published_at: publishedAt } : {}) },
    what,
  );
}

/**
 * Record signatures that verified, per key set (verified-memo.ts), remembered under the signature
 * and the record's digest: the digest was just recomputed from the record's members and equals the
 * one stated, and the signed text is those members with that digest, so the pair names the signed
 * bytes exactly. A consumer re-checking a passport before each call pays the ES256 verification once
 * per record version; the digest is recomputed on every check.
 */
const verifiedRecords = new VerifiedMemo<{ kid: string }>(1024);

/**
 * Checks a record as served: its digest against its canonical JSON, then its detached signature
 * against the trusted keys (when any are configured).
 * @example
 * const check = await checkRecordProof(json, parsed, response.headers.get("passport-signature"), ring);
 * if (!check.ok) check.finding.outcome; // "signature_invalid" | "unknown_key"
 */
export async function checkRecordProof(
  raw: Record<string, unknown>,
  record: PassportRecordView,
  signature: string | null,
  keys: KeyRing | undefined,
): Promise<ProofCheck> {
  const { digest: stated, ...content } = raw;
  // Canonicalised once: the digest covers the members but `digest`; the signature covers all.
  const members = canonicalMembers(content);
  const computed = digestOfCanonical(joinMembers(members));
  if (stated !== computed) {
    return {
      ok: false,
      finding: signatureInvalid(record, "digest_mismatch", {
        ...(typeof stated === "string" ? { stated_digest: stated } : {}),
        computed_digest: computed,
      }),
    };
  }
  if (!keys) return { ok: true, proof: { digest: "verified", signature: "skipped_insecure", history: "not_checked" } };
  if (!signature) return { ok: false, finding: signatureInvalid(record, "missing") };
  const memoKey = `${computed} ${signature}`;
  const known = verifiedRecords.get(keys, memoKey);
  if (known)
    return { ok: true, proof: { digest: "verified", signature: "verified", kid: known.kid, history: "not_checked" } };
  const check = await verifyDetachedJwsOver(signature, withMember(members, "digest", stated), keys);
  if (check.valid) {
    verifiedRecords.remember(keys, memoKey, { kid: check.kid });
    return { ok: true, proof: { digest: "verified", signature: "verified", kid: check.kid, history: "not_checked" } };
  }
  if (check.reason === "unknown_key")
    return { ok: false, finding: unknownKey(record, { kid: check.kid ?? "", keys, signed: "record" }) };
  return { ok: false, finding: signatureInvalid(record, check.reason, check.kid ? { kid: check.kid } : {}) };
}

/**
 * Compares a record with a version seen before: an older version served as current is a rollback,
 * a different record for the same version a fork. A newer version passes (the history check, when
 * asked for, shows whether it descends from the one seen). An older version within the propagation
 * window after the one seen was published (when `seen.published_at` says when) is `stale`: another
 * location's copy has not caught up yet. `now` (ms since the epoch) is required: without it no
 * disagreement could be told apart from publication in progress.
 */
export function compareWithSeen(record: PassportRecordView, seen: SeenVersion, now: number): ProofFinding | undefined {
  const version = record.record_version;
  if (version === undefined) return undefined;
  if (version < seen.record_version && withinPropagation(seen.published_at, now)) {
    return lagging(record, {
      behind: "record",
      newer: seen.record_version,
      publishedAt: seen.published_at,
      what: `version ${seen.record_version} was seen, and this copy still shows version ${version}`,
    });
  }
  if (version < seen.record_version) {
    return historyBroken(record, {
      kind: "rollback",
      at: version,
      against: "seen_version",
      detail: `version ${version} was served as current after version ${seen.record_version} had been seen`,
      digests: { expected: seen.digest, actual: record.digest ?? "" },
    });
  }
  if (version === seen.record_version && record.digest !== seen.digest) {
    return historyBroken(record, {
      kind: "fork",
      at: version,
      against: "seen_version",
      detail: `version ${version} was seen before with a different digest`,
      digests: { expected: seen.digest, actual: record.digest ?? "" },
    });
  }
  return undefined;
}

/**
 * Checks a passport's published history against the record served as current: every entry's
 * signature (with trusted keys), an unbroken chain of previous digests from the first published
 * version, the record as the last entry, and each version seen before on the chain. `now` (ms since
 * the epoch) decides which disagreements are still within the propagation window.
 */
export async function checkHistory(
  record: PassportRecordView,
  entries: HistoryEntryView[],
  keys: KeyRing | undefined,
  seen: SeenVersion[],
  now: number,
): Promise<ProofFinding | undefined> {
  if (keys) {
    for (const { signature, ...entry } of entries) {
      const check = await verifyDetachedJws(signature, entry, keys);
      if (check.valid) continue;
      if (check.reason === "unknown_key") {
        return unknownKey(record, {
          kid: check.kid ?? "",
          keys,
          signed: "history_entry",
          version: entry.record_version,
        });
      }
      return historyBroken(record, {
        kind: "entry_signature_invalid",
        at: entry.record_version,
        against: "published_history",
        detail: `the history entry for version ${entry.record_version} fails its signature`,
      });
    }
  }
  let previous: HistoryEntryView | undefined;
  for (const entry of entries) {
    if (previous && entry.record_version <= previous.record_version) {
      return historyBroken(record, {
        kind: "fork",
        at: entry.record_version,
        against: "published_history",
        detail: `the history lists version ${entry.record_version} after version ${previous.record_version}`,
      });
    }
    if (entry.previous_digest !== previous?.digest && withinPropagation(entry.published_at, now)) {
      // The entries between were written before this one, and may reach this location after it.
      return lagging(record, {
        behind: "history",
        newer: entry.record_version,
        publishedAt: entry.published_at,
        what: `the history lists version ${entry.record_version} but not yet every version before it`,
      });
    }
    if (entry.previous_digest !== previous?.digest) {
      return historyBroken(record, {
        kind: "gap",
        at: entry.record_version,
        against: "published_history",
        detail: previous
          ? `version ${entry.record_version} follows a version with digest ${entry.previous_digest ?? "(none)"}, but the history lists version ${previous.record_version} (${previous.digest}) before it`
          : `the history starts at version ${entry.record_version}, which follows a version the history does not list`,
        digests: { expected: previous?.digest ?? "(none)", actual: entry.previous_digest ?? "(none)" },
      });
    }
    previous = entry;
  }
  for (const version of seen) {
    const listed = entries.find((e) => e.record_version === version.record_version);
    if (!listed && withinPropagation(version.published_at, now)) {
      return lagging(record, {
        behind: "history",
        newer: version.record_version,
        publishedAt: version.published_at,
        what: `version ${version.record_version} was seen, and the history does not list it yet`,
      });
    }
    if (!listed || listed.digest !== version.digest) {
      return historyBroken(record, {
        kind: listed ? "fork" : "gap",
        at: version.record_version,
        against: "seen_version",
        detail: listed
          ? `the history lists version ${version.record_version} with a different digest from the one seen before`
          : `version ${version.record_version}, seen before, is missing from the history`,
        digests: { expected: version.digest, actual: listed?.digest ?? "(none)" },
      });
    }
  }
  const version = record.record_version ?? 0;
  const mine = entries.find((e) => e.record_version === version);
  const last = entries.at(-1);
  if (!mine && withinPropagation(record.published_at, now)) {
    return lagging(record, {
      behind: "history",
      newer: version,
      publishedAt: record.published_at,
      what: `the history does not list version ${version} yet`,
    });
  }
  if (!mine) {
    return historyBroken(record, {
      kind: "not_in_history",
      at: version,
      against: "published_history",
      detail: `version ${version} is not in the published history${last ? ` (its newest entry is version ${last.record_version})` : ""}`,
    });
  }
  if (mine.digest !== record.digest || mine.previous_digest !== record.previous_digest) {
    return historyBroken(record, {
      kind: "fork",
      at: version,
      against: "published_history",
      detail: `the history lists a different record for version ${version}`,
      digests: { expected: mine.digest, actual: record.digest ?? "" },
    });
  }
  if (last && last !== mine && withinPropagation(last.published_at, now)) {
    return lagging(record, {
      behind: "record",
      newer: last.record_version,
      publishedAt: last.published_at,
      what: `the history lists version ${last.record_version}, and this copy still shows version ${version}`,
    });
  }
  if (last && last !== mine) {
    return historyBroken(record, {
      kind: "rollback",
      at: version,
      against: "published_history",
      detail: `version ${version} was served as current, but the history lists version ${last.record_version} after it`,
      digests: { expected: last.digest, actual: record.digest ?? "" },
    });
  }
  return undefined;
}
