/**
 * Status tokens in a decision (docs/verifier.md, Current proof): the stapled token checked before
 * the record is read, the current-proof check of a `higher` decision, and the issuance-pending
 * reading of a record not found. Each token is checked offline against the trusted keys.
 */
import type { VerifierContext } from "./context.ts";
import type { Expectation } from "./expectation.ts";
import { KeyRing } from "./keys.ts";
import type { NetworkFailure, NotFound, StaleItem, StatusProof } from "./outcome.ts";
import type { PassportRecordView } from "./record.ts";
import { networkFailure } from "./resolution.ts";
import { checkStatusToken, compareWithRecord, fetchStatusToken, type StatusCheck } from "./status.ts";
import type { KeysAnswer } from "./trusted-keys.ts";

/** The oldest status token a `higher` decision accepts unless the caller says otherwise (`statusMaxAge`). */
export const DEFAULT_STATUS_MAX_AGE_SECONDS = 30;

/** What the current-proof check establishes: the token's proof and text, and why it is stale if it is. */
export interface CurrentProof {
  stale?: StaleItem;
  proof?: StatusProof;
  token?: string;
}

/** The record a `higher` decision rests on, and the status token stapled to the call (checked already, or not). */
export interface CurrentProofRequest {
  identityId: string;
  record: PassportRecordView;
  expectation: Expectation;
  maxAgeSeconds: number;
  stapled: StatusCheck | undefined;
  keys: KeysAnswer;
}

/**
 * The current-proof check of a `higher` decision: a status token (the stapled one, else one
 * fetched from the resolver) checked offline against the pinned keys, not older than
 * `maxAgeSeconds`, stating this record's version and digest as the newest with nothing newer
 * owed. A failure to reach the status route is a network failure; any other failure is the
 * stale item returned.
 */
export async function currentProof(
  context: VerifierContext,
  request: CurrentProofRequest,
): Promise<{ network: NetworkFailure } | CurrentProof> {
  const { identityId, record, expectation, maxAgeSeconds, stapled, keys } = request;
  if (keys && !(keys instanceof KeyRing)) return { network: keys };
  let check: StatusCheck | undefined = stapled;
  let from: StatusProof["source"] = "stapled";
  let token = expectation.statusToken;
  if (expectation.statusToken && !check) {
    check = await checkStatusToken(expectation.statusToken, keys, identityId, context.now(), maxAgeSeconds);
  }
  if (!check?.ok) {
    const fetched = await fetchStatus(context, identityId, expectation.signal);
    if ("network" in fetched) return fetched;
    if ("unavailable" in fetched) {
      return { stale: { what: "status", problem: check?.problem ?? "unavailable", detail: fetched.unavailable } };
    }
    check = await checkStatusToken(fetched.token, keys, identityId, context.now(), maxAgeSeconds);
    from = "fetched";
    token = fetched.token;
  }
  if (!check.ok) return { stale: { what: "status", problem: check.problem, detail: check.detail } };
  const { claims } = check;
  const proof: StatusProof = {
    source: from,
    ...(check.kid ? { kid: check.kid } : {}),
    issued_at: new Date(claims.iat * 1000).toISOString(),
    expires_at: new Date(claims.exp * 1000).toISOString(),
    ...(claims.record_version !== undefined ? { record_version: claims.record_version } : {}),
    ...(claims.digest ? { digest: claims.digest } : {}),
    publication: claims.publication,
    lifecycle: claims.lifecycle,
  };
  const stale = compareWithRecord(claims, record);
  return { proof, ...(token ? { token } : {}), ...(stale ? { stale } : {}) };
}

/** Checks a stapled status token offline; undefined when the trusted keys cannot be had (checked again later). */
export async function checkStapled(
  context: VerifierContext,
  stapled: { identityId: string; token: string; keys: KeysAnswer; maxAgeSeconds: number },
): Promise<StatusCheck | undefined> {
  const { identityId, token, keys, maxAgeSeconds } = stapled;
  if (keys && !(keys instanceof KeyRing)) return undefined;
  return checkStatusToken(token, keys, identityId, context.now(), maxAgeSeconds);
}

/** Reads a status token from the resolver's status route. */
async function fetchStatus(
  context: VerifierContext,
  identityId: string,
  signal?: AbortSignal,
): Promise<{ network: NetworkFailure } | { unavailable: string } | { token: string }> {
  const fetched = await fetchStatusToken(context.resolver, identityId, context.http, signal);
  return "network" in fetched ? { network: networkFailure(identityId, fetched.url, fetched.network) } : fetched;
}

/**
 * A record not found may be an issuance delay: when the resolver's status route answers a valid
 * token saying the id was issued and its first publication is pending, the outcome says so and
 * its next step is `delay`, not `deny`. Any other answer leaves the outcome as it is.
 */
export async function issuancePending(
  context: VerifierContext,
  result: NotFound,
  keys: KeysAnswer,
  signal?: AbortSignal,
): Promise<NotFound> {
  if (!(keys instanceof KeyRing)) return result;
  const identityId = result.identity_id;
  const fetched = await fetchStatus(context, identityId, signal);
  if (!("token" in fetched)) return result;
  const check = await checkStatusToken(fetched.token, keys, identityId, context.now(), DEFAULT_STATUS_MAX_AGE_SECONDS);
  if (!check.ok || check.claims.publication !== "pending" || check.claims.record_version !== undefined) return result;
  const { next_attempt_at } = check.claims;
  return {
    ...result,
    next_step: "delay",
    reason:
      "This passport was issued, but its first publication is still pending (it is retried automatically); the resolver has no record of it yet. Wait and re-check; do not rely on it until then.",
    publication_pending: {
      ...(next_attempt_at ? { next_attempt_at } : {}),
      status_issued_at: new Date(check.claims.iat * 1000).toISOString(),
    },
  };
}
