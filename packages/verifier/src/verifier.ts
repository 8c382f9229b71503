import { type CacheEntry, copyAge, isFresh, RecordCache } from "./cache.ts";
import { evaluate } from "./checks.ts";
import { CONSEQUENCES, type Consequence, type Duration, type Expectation, requireDuration } from "./expectation.ts";
import {
  ageSeconds,
  cacheDirectives,
  type FetchLike,
  fetchWithRetry,
  type HttpPolicy,
  platformFetch,
  readProblem,
} from "./http.ts";
import { describeIdentityIdDefect, identityIdDefect } from "./identity-id.ts";
import {
  type MalformedId,
  type NetworkFailure,
  type NetworkFailureKind,
  type NotFound,
  outcome,
  type ProofSource,
  type VerifyOutcome,
} from "./outcome.ts";
import { type PassportRecordView, parseRecord } from "./record.ts";

export const PROBLEM_TYPE_BASE = "urn:svc:passport:problem:";

export interface VerifierOptions {
  /** The resolver's base URL, for example `https://resolver.example`; records are read from `{resolver}/api/p/{id}.json`. */
  resolver: string;
  /** Defaults to the platform's `fetch`. In a Worker, a service binding's `(i, init) => env.RESOLVER.fetch(i, init)` works too. */
  fetch?: FetchLike;
  /** Per attempt; default 5000. */
  timeoutMs?: number;
  /** Retries after a network failure, a timeout or a 5xx; default 2. */
  retries?: number;
  /** Back-off before the first retry, doubled for each further one; default 250. */
  retryDelayMs?: number;
  /** The in-memory cache to use (share one between verifiers), or `false` for none. */
  cache?: RecordCache | false;
  /** The clock, in milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
}

export interface ResolveOptions {
  consequence?: Consequence;
  maxAge?: Duration;
  signal?: AbortSignal;
}

/** A record the resolver returned (or the cache held, within the resolver's own freshness lifetime). */
export interface Resolved {
  outcome: "resolved";
  ok: true;
  identity_id: string;
  record: PassportRecordView;
  source: ProofSource;
}

export type ResolveResult = Resolved | NotFound | MalformedId | NetworkFailure;

/**
 * The reference consumer: resolves passports and runs the pre-call check of spec 4.6.
 * @example
 * const verifier = new Verifier({ resolver: "https://resolver.example" });
 * const result = await verifier.verify("psp_k03khmq2ren546nj2zrpdtsmdz", {
 *   family: "api",
 *   environment: "production",
 *   baseUrl: "https://payments.example/v1",
 *   consequence: "higher",
 * });
 * if (result.outcome !== "ok") console.log(result.next_step, result.reason);
 */
export class Verifier {
  readonly resolver: string;
  readonly #http: HttpPolicy;
  readonly #cache: RecordCache | undefined;
  readonly #now: () => number;

  constructor(options: VerifierOptions) {
    if (!URL.canParse(options.resolver) || !/^https?:$/.test(new URL(options.resolver).protocol)) {
      throw new TypeError(`resolver: "${options.resolver}" is not an http(s) URL`);
    }
    this.resolver = options.resolver.replace(/\/+$/, "");
    this.#http = {
      fetch: options.fetch ?? platformFetch,
      timeoutMs: options.timeoutMs ?? 5000,
      retries: options.retries ?? 2,
      retryDelayMs: options.retryDelayMs ?? 250,
    };
    this.#cache = options.cache === false ? undefined : (options.cache ?? new RecordCache());
    this.#now = options.now ?? Date.now;
  }

  /** The address of a passport's public record at this resolver. */
  recordUrl(identityId: string): string {
    return `${this.resolver}/api/p/${encodeURIComponent(identityId)}.json`;
  }

  /** Settings shared with the other requests this verifier makes (the envelope). */
  get http(): HttpPolicy {
    return this.#http;
  }

  /**
   * Fetches a passport's public record, honouring the consequence policy of spec 4.1: `lower`
   * reuses a cached copy while the resolver's `Cache-Control: max-age` (and `maxAge`) allow;
   * `changing` re-resolves, with `If-None-Match` when an ETag is known, so an unchanged record
   * costs a 304; `higher` re-checks immediately with an unconditional request, so the decision
   * rests only on bytes the resolver sent now. `If-None-Match` is the only header added: it is
   * the one the resolver's CORS preflight admits.
   * @example
   * const result = await verifier.resolve(id);
   * if (result.outcome === "resolved") result.record.state.lifecycle;
   */
  async resolve(identityId: string, options: ResolveOptions = {}): Promise<ResolveResult> {
    const consequence = options.consequence ?? "lower";
    if (!CONSEQUENCES.includes(consequence))
      throw new TypeError(`consequence: "${consequence}" is not one of ${CONSEQUENCES.join(", ")}`);
    const maxAge = options.maxAge === undefined ? undefined : requireDuration(options.maxAge, "maxAge");
    const url = this.recordUrl(identityId);
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

    const cached = this.#cache?.get(url);
    const now = this.#now();
    if (
      cached &&
      consequence === "lower" &&
      isFresh(cached, now) &&
      (maxAge === undefined || copyAge(cached, now) <= maxAge)
    ) {
      return resolved(identityId, cached, url, now, { from_cache: true, revalidated: false, attempts: 0 });
    }

    const headers: Record<string, string> = { accept: "application/json" };
    if (cached?.etag && consequence !== "higher") headers["if-none-match"] = cached.etag;
    const answer = await fetchWithRetry(url, { headers }, this.#http, options.signal);
    if (!answer.ok) {
      const { ok: _, problemType, ...failure } = answer;
      return networkFailure(identityId, url, { ...failure, ...(problemType ? { problem_type: problemType } : {}) });
    }
    const { response, attempts } = answer;
    const confirmedAt = this.#now();
    const directives = cacheDirectives(response.headers.get("cache-control"));
    const freshness = {
      confirmedAt,
      ageAtConfirmation: ageSeconds(response.headers.get("age")),
      noCache: directives.noCache,
      ...(directives.maxAge !== undefined ? { maxAge: directives.maxAge } : {}),
    };

    if (response.status === 304 && cached) {
      await response.body?.cancel();
      const entry: CacheEntry = { ...cached, ...freshness };
      if (directives.maxAge === undefined) delete entry.maxAge;
      this.#store(url, entry, directives.noStore);
      return resolved(identityId, entry, url, confirmedAt, { from_cache: false, revalidated: true, attempts });
    }

    if (response.status === 200) {
      let json: unknown;
      try {
        json = await response.json();
      } catch {
        return networkFailure(identityId, url, {
          kind: "unexpected_response",
          attempts,
          status: 200,
          detail: "the resolver's answer is not JSON",
        });
      }
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
      const entry: CacheEntry = { record: parsed.value, ...(etag ? { etag } : {}), ...freshness };
      this.#store(url, entry, directives.noStore);
      return resolved(identityId, entry, url, confirmedAt, { from_cache: false, revalidated: false, attempts });
    }

    const problem = await readProblem(response);
    if (response.status === 404 && problem.type === `${PROBLEM_TYPE_BASE}identity-not-found`) {
      this.#cache?.delete(url);
      return outcome<NotFound>({
        outcome: "not_found",
        identity_id: identityId,
        next_step: "deny",
        reason:
          "The resolver has no published passport with this id. Confirm the id and that this is the official resolver; a just-issued passport may not be published yet. Never substitute another identity.",
        relied_on: {},
        resolver_url: this.resolver,
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

  /**
   * The pre-call check (spec 4.6 steps 2 to 4): resolves the passport under the expectation's
   * consequence policy and compares it with what the decision needs.
   * @example
   * const result = await verifier.verify(id, { family: "api", evidence: [{ claim: "organisation.domain_control", maxAge: "30d" }] });
   * result.outcome; // "ok", "missing_evidence", "stale", ...
   */
  async verify(identityId: string, expectation: Expectation = {}): Promise<VerifyOutcome> {
    // A malformed expectation is the caller's bug: refuse it before any request, never as an outcome.
    for (const requirement of expectation.evidence ?? []) {
      if (typeof requirement !== "string" && requirement.maxAge !== undefined) {
        requireDuration(requirement.maxAge, `evidence ${requirement.claim} maxAge`);
      }
    }
    const result = await this.resolve(identityId, {
      ...(expectation.consequence ? { consequence: expectation.consequence } : {}),
      ...(expectation.maxAge !== undefined ? { maxAge: expectation.maxAge } : {}),
      ...(expectation.signal ? { signal: expectation.signal } : {}),
    });
    if (result.outcome !== "resolved") return result;
    return evaluate(result.record, expectation, result.source, this.#now());
  }

  #store(url: string, entry: CacheEntry, noStore: boolean): void {
    if (noStore) this.#cache?.delete(url);
    else this.#cache?.set(url, entry);
  }
}

function resolved(
  identityId: string,
  entry: CacheEntry,
  url: string,
  now: number,
  how: Pick<ProofSource, "from_cache" | "revalidated" | "attempts">,
): Resolved {
  return {
    outcome: "resolved",
    ok: true,
    identity_id: identityId,
    record: entry.record,
    source: {
      url,
      fetched_at: new Date(entry.confirmedAt).toISOString(),
      age_seconds: copyAge(entry, now),
      ...(entry.etag ? { etag: entry.etag } : {}),
      ...how,
    },
  };
}

const NETWORK_REASONS: Record<NetworkFailureKind, string> = {
  timeout: "The resolver did not answer in time.",
  network: "The resolver could not be reached.",
  server_error: "The resolver failed to answer.",
  unexpected_response: "The resolver's answer could not be used.",
  aborted: "The check was cancelled.",
};

function networkFailure(
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
