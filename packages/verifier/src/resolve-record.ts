/**
 * Reading one passport's record (`Verifier.resolve`): from the cache when the consequence and the
 * resolver's freshness allow, else from the resolver (conditionally when a copy's ETag is known),
 * then its signature and the proof checks that follow (confirm.ts). Only a record whose proof
 * held enters the cache.
 */
import { describeIdentityIdDefect, identityIdDefect } from "@passport/protocol";
import { type CacheEntry, copyAge, isFresh, lifetime } from "./cache.ts";
import { confirmRecord } from "./confirm.ts";
import { recordUrl, type VerifierContext } from "./context.ts";
import { CONSEQUENCES, requireDuration, type SuppliedRecord } from "./expectation.ts";
import {
  ageSeconds,
  cacheDirectives,
  fetchWithRetry,
  PROBLEM_TYPE_BASE,
  readFailureKind,
  readProblem,
  readStrictJson,
} from "./http.ts";
import { KeyRing } from "./keys.ts";
import { type CurrentVersion, parseLogIndex } from "./log/check.ts";
import { type MalformedId, type NotFound, outcome, type Proof } from "./outcome.ts";
import { ambiguousRecord, checkRecordProof } from "./proof.ts";
import { parseRecord } from "./record.ts";
import {
  networkFailure,
  proofFailure,
  type ResolveOptions,
  type ResolveResult,
  type Retrieval,
  source,
} from "./resolution.ts";
import type { KeysAnswer } from "./trusted-keys.ts";

/**
 * Fetches a passport's public record under the consequence policy (see `Verifier.resolve`).
 * `current`: the version a stapled status token checked just now names as current (`verify` at
 * `higher`). A cached copy of exactly that version and digest is used without a request, since
 * the token proves it current, and the log check may take it as the newest. Never taken from a
 * caller: only a checked token may say a copy is current. `keys`: the trusted keys of this call.
 */
export async function resolveRecord(
  context: VerifierContext,
  identityId: string,
  options: ResolveOptions,
  call: { current: CurrentVersion | undefined; keys: () => Promise<KeysAnswer> },
): Promise<ResolveResult> {
  const consequence = options.consequence ?? "lower";
  if (!CONSEQUENCES.includes(consequence))
    throw new TypeError(`consequence: "${consequence}" is not one of ${CONSEQUENCES.join(", ")}`);
  const maxAge = options.maxAge === undefined ? undefined : requireDuration(options.maxAge, "maxAge");
  const url = recordUrl(context.resolver, identityId);
  const defect = identityIdDefect(identityId);
  if (defect) {
    return outcome<MalformedId>({
      outcome: "malformed_id",
      identity_id: identityId,
      next_step: "challenge",
      reason: `This is not a valid identity id: ${describeIdentityIdDefect(defect)}. Ask whoever supplied it for a correct copy.`,
      relied_on: {},
      defect,
      detail: describeIdentityIdDefect(defect),
    });
  }

  const keys = await call.keys();
  if (keys && !(keys instanceof KeyRing)) return keys;
  const { current } = call;
  const confirm = (entry: CacheEntry, replaced: CacheEntry | undefined, now: number, how: Retrieval) =>
    confirmRecord(context, { identityId, entry, replaced, url, now, how, keys, options, current });

  const now = context.now();
  const stored = await unexpired(context, url, now);
  const supplied = options.record;
  // A shared cache may hold a copy checked with other keys, or none: such a copy is not reused,
  // though it still counts as a version seen before. A supplied record is decided on as given.
  const usable = !supplied && stored && acceptable(stored, keys) ? stored : undefined;
  const provenCurrent =
    usable &&
    current !== undefined &&
    usable.record.record_version === current.record_version &&
    usable.record.digest === current.digest;
  if (
    usable &&
    (provenCurrent ||
      (consequence === "lower" && isFresh(usable, now) && (maxAge === undefined || copyAge(usable, now) <= maxAge)))
  ) {
    return confirm(usable, undefined, now, { from_cache: true, revalidated: false, attempts: 0 });
  }

  const headers: Record<string, string> = { accept: "application/json" };
  if (usable?.etag && consequence !== "higher") headers["if-none-match"] = usable.etag;
  const answer = supplied
    ? { ok: true as const, response: suppliedResponse(supplied), attempts: 0 }
    : await fetchWithRetry(url, { headers }, context.http, options.signal);
  if (!answer.ok) {
    const { ok: _, problemType, ...failure } = answer;
    return networkFailure(identityId, url, { ...failure, ...(problemType ? { problem_type: problemType } : {}) });
  }
  const { response, attempts } = answer;
  const confirmedAt = context.now();
  const directives = cacheDirectives(response.headers.get("cache-control"));
  const answered = {
    confirmedAt,
    ageAtConfirmation: ageSeconds(response.headers.get("age")),
    noCache: directives.noCache,
    ...(directives.maxAge !== undefined ? { maxAge: directives.maxAge } : {}),
  };
  const freshness = { ...answered, ...lifetime(answered) };

  if (response.status === 304 && usable) {
    await response.body?.cancel();
    const logIndex = parseLogIndex(response.headers.get("passport-log-index")) ?? usable.logIndex;
    const entry: CacheEntry = {
      ...usable,
      ...freshness,
      ...(logIndex !== undefined ? { logIndex } : {}),
      proof: { ...(usable.proof as Proof), history: "not_checked" },
    };
    if (directives.maxAge === undefined) delete entry.maxAge;
    const result = await confirm(entry, undefined, confirmedAt, { from_cache: false, revalidated: true, attempts });
    if (result.outcome === "resolved") await store(context, url, entry, directives.noStore);
    return result;
  }

  if (response.status === 200) {
    const how = { from_cache: false, revalidated: false, attempts };
    const read = await readStrictJson(response, context.http.maxBytes);
    if (!read.ok && read.kind === "duplicate_member") {
      // Two readings of one record: refused before its signature, which covers only one of them.
      return proofFailure(
        identityId,
        ambiguousRecord(identityId, read.problem),
        source(freshness, url, confirmedAt, how),
      );
    }
    if (!read.ok) {
      return networkFailure(identityId, url, {
        kind: readFailureKind(read),
        attempts,
        status: 200,
        detail: `the resolver's answer is not usable: ${read.problem}`,
      });
    }
    const json = read.value;
    const parsed = parseRecord(json);
    if (!parsed.ok || parsed.value.identity_id !== identityId) {
      return networkFailure(identityId, url, {
        kind: "unexpected_response",
        attempts,
        status: 200,
        detail: parsed.ok
          ? `the resolver returned the record of ${parsed.value.identity_id}, not of the id asked for`
          : `the resolver's answer is not a usable passport record: ${parsed.problem}`,
      });
    }
    const etag = response.headers.get("etag");
    const signature = response.headers.get("passport-signature");
    const check = await checkRecordProof(json as Record<string, unknown>, parsed.value, signature, keys);
    const logIndex = parseLogIndex(response.headers.get("passport-log-index"));
    const partial = {
      record: parsed.value,
      ...(etag ? { etag } : {}),
      ...(logIndex !== undefined ? { logIndex } : {}),
      ...freshness,
    };
    if (!check.ok) return proofFailure(identityId, check.finding, source(partial, url, confirmedAt, how));
    const entry: CacheEntry = { ...partial, proof: check.proof };
    const result = await confirm(entry, stored, confirmedAt, how);
    // A record that fails its proof never replaces the copy it was compared with; a supplied one never enters.
    if (result.outcome === "resolved" && !supplied) await store(context, url, entry, directives.noStore);
    if (supplied && result.source) result.source.supplied = true;
    return result;
  }

  const problem = await readProblem(response);
  if (response.status === 404 && problem.type === `${PROBLEM_TYPE_BASE}identity-not-found`) {
    await context.cache?.delete(url);
    return outcome<NotFound>({
      outcome: "not_found",
      identity_id: identityId,
      next_step: "deny",
      reason:
        "The resolver has no published passport with this id. Confirm the id and that this is the official resolver; a just-issued passport may not be published yet. Never substitute another identity.",
      relied_on: {},
      resolver_url: context.resolver,
      ...(problem.detail ? { detail: problem.detail } : {}),
    });
  }
  if (response.status === 400 && problem.type === `${PROBLEM_TYPE_BASE}malformed-identity-id`) {
    return outcome<MalformedId>({
      outcome: "malformed_id",
      identity_id: identityId,
      next_step: "challenge",
      reason: `The resolver refused the id as malformed${problem.detail ? `: ${problem.detail}` : ""}.`,
      relied_on: {},
      detail: problem.detail ?? "the resolver refused the id as malformed",
    });
  }
  return networkFailure(identityId, url, {
    kind: "unexpected_response",
    attempts,
    status: response.status,
    ...(problem.type ? { problem_type: problem.type } : {}),
    detail: `the resolver answered ${response.status}${problem.type ? ` ${problem.type}` : ""}${problem.detail ? `: ${problem.detail}` : ""}; check the resolver address`,
  });
}

/** The cached copy at `url`, unless it has expired at `now` (then it is as if there were none). */
async function unexpired(context: VerifierContext, url: string, now: number): Promise<CacheEntry | undefined> {
  const entry = await context.cache?.get(url);
  return entry && now < entry.expired ? entry : undefined;
}

/** True when a cached copy was checked as this verifier requires, with a key it still trusts. */
function acceptable(entry: CacheEntry, keys: KeyRing | undefined): boolean {
  const proof = entry.proof;
  if (!proof) return false;
  if (!keys) return true;
  return proof.signature === "verified" && proof.kid !== undefined && keys.key(proof.kid) !== undefined;
}

async function store(context: VerifierContext, url: string, entry: CacheEntry, noStore: boolean): Promise<void> {
  if (noStore) await context.cache?.delete(url);
  else await context.cache?.set(url, entry);
}

/** A supplied record as the answer the resolver would have given: its bytes and its signature header. */
function suppliedResponse(record: SuppliedRecord): Response {
  return new Response(record.body, {
    status: 200,
    headers: record.signature ? { "passport-signature": record.signature } : {},
  });
}
