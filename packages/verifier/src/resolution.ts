/**
 * What resolving a record answers: the options a caller gives, the `resolved` answer, and the
 * failures built on the way (a record whose proof failed, a resolver that could not be read).
 */
import { type CacheEntry, copyAge } from "./cache.ts";
import type { Consequence, Duration, SuppliedRecord } from "./expectation.ts";
import {
  type LogFinding,
  type MalformedId,
  type NetworkFailure,
  type NetworkFailureKind,
  type NotFound,
  outcome,
  type Proof,
  type ProofFailure,
  type ProofSource,
  type SeenVersion,
  type Stale,
} from "./outcome.ts";
import type { ProofFinding } from "./proof.ts";
import type { PassportRecordView } from "./record.ts";

export interface ResolveOptions {
  consequence?: Consequence;
  maxAge?: Duration;
  signal?: AbortSignal;
  /**
   * Also read the passport's published history and check that it chains, signed, from the first
   * version to the record served (one request per 1000 versions). Default `false`.
   */
  history?: boolean;
  /**
   * A version of this passport seen before (kept by the caller): a record older than it, or a
   * different record for the same version, fails as `history_broken`. The verifier's cache is
   * used the same way.
   */
  seen?: SeenVersion;
  /**
   * Decide on this record instead of fetching it (see `Expectation.record`): its proof is checked
   * as for a fetched one, and it never enters the cache.
   */
  record?: SuppliedRecord;
}

/** A record the resolver returned (or the cache held, within the resolver's own freshness lifetime). */
export interface Resolved {
  outcome: "resolved";
  ok: true;
  identity_id: string;
  record: PassportRecordView;
  source: ProofSource;
  proof: Proof;
}

/** `stale` here is publication still propagating (the record and its proof disagree for now). */
export type ResolveResult = Resolved | NotFound | MalformedId | NetworkFailure | ProofFailure | Stale;

/** How a copy was had: from the cache, revalidated with a 304, and in how many attempts. */
export type Retrieval = Pick<ProofSource, "from_cache" | "revalidated" | "attempts">;

/** Where a copy came from and how old it is at `now`. */
export function source(
  entry: Pick<CacheEntry, "confirmedAt" | "ageAtConfirmation" | "etag">,
  url: string,
  now: number,
  how: Retrieval,
): ProofSource {
  return {
    url,
    fetched_at: new Date(entry.confirmedAt).toISOString(),
    age_seconds: copyAge(entry, now),
    ...(entry.etag ? { etag: entry.etag } : {}),
    ...how,
  };
}

export function resolved(identityId: string, entry: CacheEntry, from: ProofSource): Resolved {
  return {
    outcome: "resolved",
    ok: true,
    identity_id: identityId,
    record: entry.record,
    source: from,
    proof: { ...(entry.proof as Proof) },
  };
}

/**
 * A record whose proof failed, or is still propagating (`stale`): the finding is the outcome, and
 * its contents are not evaluated.
 */
export function proofFailure(
  identityId: string,
  finding: ProofFinding | LogFinding,
  from: ProofSource,
): ProofFailure | Stale {
  return outcome<ProofFailure | Stale>({ ...finding, identity_id: identityId, source: from, findings: [finding] });
}

const NETWORK_REASONS: Record<NetworkFailureKind, string> = {
  timeout: "The resolver did not answer in time.",
  network: "The resolver could not be reached.",
  server_error: "The resolver failed to answer.",
  unexpected_response: "The resolver's answer could not be used.",
  aborted: "The check was cancelled.",
};

export function networkFailure(
  identityId: string,
  url: string,
  failure: { kind: NetworkFailureKind; attempts: number; status?: number; problem_type?: string; detail: string },
): NetworkFailure {
  return outcome<NetworkFailure>({
    outcome: "network_failure",
    identity_id: identityId,
    next_step: "delay",
    reason: `${NETWORK_REASONS[failure.kind]} Could not fetch proof, which is not proof that the identity is invalid; do not rely on it until it can be re-checked.`,
    relied_on: {},
    url,
    ...failure,
  });
}
