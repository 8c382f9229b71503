/**
 * The proof checks that follow a record's own signature: against versions seen before (the
 * caller's and the cached copy it replaces), against the published history when asked for, and
 * against the transparency log when the verifier has one.
 */
import type { CacheEntry } from "./cache.ts";
import type { VerifierContext } from "./context.ts";
import { fetchHistory } from "./history.ts";
import type { KeyRing } from "./keys.ts";
import { type CurrentVersion, checkLog } from "./log/check.ts";
import type { LogFinding, Proof, SeenVersion } from "./outcome.ts";
import { checkHistory, compareWithSeen, type ProofFinding } from "./proof.ts";
import {
  networkFailure,
  proofFailure,
  type ResolveOptions,
  type ResolveResult,
  type Retrieval,
  resolved,
  source,
} from "./resolution.ts";

/** One record to confirm, with what it was read under. */
export interface Confirmation {
  identityId: string;
  /** The copy read (or reused); its `proof` is filled with what is established here. */
  entry: CacheEntry;
  /** The cached copy this one would replace: a version seen before. */
  replaced: CacheEntry | undefined;
  url: string;
  now: number;
  how: Retrieval;
  keys: KeyRing | undefined;
  options: ResolveOptions;
  /** The version a checked status token names as current (see `resolveRecord`). */
  current: CurrentVersion | undefined;
}

/** Confirms a record whose own proof held; fills `entry.proof` with what was established. */
export async function confirmRecord(context: VerifierContext, confirmation: Confirmation): Promise<ResolveResult> {
  const { identityId, entry, replaced, url, now, how, keys, options, current } = confirmation;
  const seen: SeenVersion[] = [];
  if (options.seen) seen.push(options.seen);
  const before = replaced?.proof ? replaced.record : undefined;
  if (before?.record_version !== undefined && before.digest !== undefined && before !== entry.record) {
    seen.push({
      record_version: before.record_version,
      digest: before.digest,
      ...(before.published_at ? { published_at: before.published_at } : {}),
    });
  }
  const fail = (finding: ProofFinding | LogFinding) => proofFailure(identityId, finding, source(entry, url, now, how));
  for (const version of seen) {
    const finding = compareWithSeen(entry.record, version, now);
    if (finding) return fail(finding);
  }
  const newest = seen.reduce<SeenVersion | undefined>(
    (a, b) => (a && a.record_version >= b.record_version ? a : b),
    undefined,
  );
  if (newest) entry.proof = { ...(entry.proof as Proof), compared_with: newest };
  const proof = entry.proof as Proof;
  if (options.history && proof.history === "not_checked") {
    const answer = await fetchHistory(context.resolver, identityId, context.http, options.signal);
    if (!answer.ok) {
      const { ok: _, url: historyUrl, ...failure } = answer;
      return networkFailure(identityId, historyUrl, failure);
    }
    const finding = await checkHistory(entry.record, answer.entries, keys, seen, context.now());
    if (finding) return fail(finding);
    entry.proof = { ...(entry.proof as Proof), history: keys ? "verified" : "chain_only" };
  }
  const result = resolved(identityId, entry, source(entry, url, now, how));
  if (context.log) {
    const { client, settings } = await context.log();
    const check = await checkLog({
      client,
      settings,
      record: entry.record,
      index: entry.logIndex,
      now: context.now(),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(current ? { current } : {}),
    });
    if (!check.ok && "network" in check) return networkFailure(identityId, check.network.url, check.network.failure);
    if (!check.ok && "stale" in check) return proofFailure(identityId, check.stale, result.source);
    if (!check.ok) return fail(check.finding);
    result.proof.log = check.proof;
  }
  return result;
}
