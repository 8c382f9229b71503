import { describeIdentityIdDefect, identityIdDefect } from "@passport/protocol";
import { type CacheEntry, copyAge, isFresh, RecordCache } from "./cache.ts";
import type { CallerSignatures } from "./caller.ts";
import { evaluate } from "./checks.ts";
import { type DecideRequest, type DecisionResult, decision, expectationFor, type Verified } from "./decide.ts";
import { type CallDecisionResult, type DecideCallRequest, decideCall } from "./decide-call.ts";
import {
  CONSEQUENCES,
  type Consequence,
  type DecisionExpectation,
  type Duration,
  type Expectation,
  requireDuration,
  type SuppliedRecord,
} from "./expectation.ts";
import { fetchHistory } from "./history.ts";
import {
  ageSeconds,
  cacheDirectives,
  DEFAULT_MAX_BYTES,
  type FetchLike,
  fetchWithRetry,
  type HttpPolicy,
  insecureAddress,
  platformFetch,
  readFailureKind,
  readProblem,
  readStrictJson,
} from "./http.ts";
import { type JwkSet, KeyRing } from "./keys.ts";
import type { LogClient } from "./log/client.ts";
import {
  type CurrentVersion,
  checkLog,
  type LogOptions,
  type LogSettings,
  logClientFor,
  parseLogIndex,
} from "./log-check.ts";
import {
  type LogFinding,
  type MalformedId,
  type NetworkFailure,
  type NetworkFailureKind,
  type NotFound,
  type OkSignatureSkipped,
  outcome,
  type Proof,
  type ProofFailure,
  type ProofSource,
  type SeenVersion,
  type Stale,
  type StaleItem,
  type StatusProof,
  type VerifyOutcome,
} from "./outcome.ts";
import { actionPolicyFor } from "./policy.ts";
import { ambiguousRecord, checkHistory, checkRecordProof, compareWithSeen, type ProofFinding } from "./proof.ts";
import { type PassportRecordView, parseRecord } from "./record.ts";
import { checkStatusToken, compareWithRecord, fetchStatusToken, type StatusCheck } from "./status.ts";

/** The oldest status token a `higher` decision accepts unless the caller says otherwise (`statusMaxAge`). */
const DEFAULT_STATUS_MAX_AGE_SECONDS = 30;

export const PROBLEM_TYPE_BASE = "urn:svc:passport:problem:";

export interface VerifierOptions {
  /**
   * The resolver's base URL, for example `https://resolver.example`; records are read from
   * `{resolver}/api/p/{id}.json`. https only; plain http only to a loopback address.
   */
  resolver: string;
  /** Defaults to the platform's `fetch`. In a Worker, a service binding's `(i, init) => env.RESOLVER.fetch(i, init)` works too. */
  fetch?: FetchLike;
  /** Per attempt; default 5000. */
  timeoutMs?: number;
  /** Retries after a network failure, a timeout or a 5xx; default 2. */
  retries?: number;
  /** Back-off before the first retry, doubled for each further one; default 250. */
  retryDelayMs?: number;
  /** Largest answer read, in bytes; default 1 MiB. A longer one is a network failure. */
  maxBytes?: number;
  /** The in-memory cache to use (share one between verifiers), or `false` for none. */
  cache?: RecordCache | false;
  /** The clock, in milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
  /**
   * The public keys trusted to sign records: a JWK Set, or the https URL of one that you choose
   * (re-read when its `Cache-Control: max-age` runs out, default 300 s). Never taken from the
   * answer being verified. Required unless `signature: "skip-insecure"`.
   */
  jwks?: JwkSet | string;
  /**
   * `"required"` (the default): every record must carry a valid signature by one of `jwks`.
   * `"skip-insecure"`: no keys, signatures not checked; a record that meets every expectation is
   * then `ok_signature_skipped`, never `ok`, because anyone on the way could have written it.
   */
  signature?: "required" | "skip-insecure";
  /**
   * Freshness by checkpoint (docs/transparency-log.md): every record must be included in the
   * transparency log at its `Passport-Log-Index`, in a checkpoint signed by the pinned log key
   * (and the witnesses asked for) no older than `maxAge`, and be the newest version of its
   * passport as of that checkpoint.
   */
  log?: LogOptions;
  /**
   * Checks a calling agent's request signature for `decideCall` (reciprocal trust): the RFC 9421 /
   * Web Bot Auth checker is `webBotAuth()` of `@passport/verifier/provider`.
   */
  callerSignatures?: CallerSignatures;
}

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

const DEFAULT_JWKS_MAX_AGE_SECONDS = 300;

type TrustedKeys =
  | { kind: "skipped" }
  | { kind: "pinned"; ring: KeyRing }
  | { kind: "url"; url: string; ring?: KeyRing; expiresAt: number };

/**
 * The reference consumer: resolves passports and runs the pre-call check of spec 4.6.
 * @example
 * const verifier = new Verifier({ resolver: "https://resolver.example", jwks: pinnedKeySet });
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
  readonly #keys: TrustedKeys;
  readonly #logOptions: LogOptions | undefined;
  readonly #callerSignatures: CallerSignatures | undefined;
  #log: Promise<{ client: LogClient; settings: LogSettings }> | undefined;

  constructor(options: VerifierOptions) {
    const unsafe = insecureAddress(options.resolver);
    if (unsafe) throw new TypeError(`resolver: "${options.resolver}" ${unsafe}`);
    this.resolver = options.resolver.replace(/\/+$/, "");
    this.#http = {
      fetch: options.fetch ?? platformFetch,
      timeoutMs: options.timeoutMs ?? 5000,
      retries: options.retries ?? 2,
      retryDelayMs: options.retryDelayMs ?? 250,
      maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    };
    this.#cache = options.cache === false ? undefined : (options.cache ?? new RecordCache());
    this.#now = options.now ?? Date.now;
    if (options.log) requireDuration(options.log.maxAge, "log.maxAge");
    this.#logOptions = options.log;
    this.#callerSignatures = options.callerSignatures;
    const { jwks, signature = "required" } = options;
    if (signature !== "required" && signature !== "skip-insecure") {
      throw new TypeError(`signature: "${signature}" is not "required" or "skip-insecure"`);
    }
    if (signature === "skip-insecure") {
      if (jwks !== undefined)
        throw new TypeError('signature: "skip-insecure" and jwks contradict each other; pick one');
      this.#keys = { kind: "skipped" };
    } else if (typeof jwks === "string") {
      const unsafeKeys = insecureAddress(jwks);
      if (unsafeKeys) throw new TypeError(`jwks: "${jwks}" ${unsafeKeys}`);
      this.#keys = { kind: "url", url: jwks, expiresAt: 0 };
    } else if (jwks !== undefined) {
      this.#keys = { kind: "pinned", ring: new KeyRing(jwks) };
    } else {
      throw new TypeError(
        'jwks is required: the public keys you trust to sign records (a JWK Set, or an https URL you choose); to check without them, say signature: "skip-insecure"',
      );
    }
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
  resolve(identityId: string, options: ResolveOptions = {}): Promise<ResolveResult> {
    return this.#resolve(identityId, options, undefined, this.#keysOnce(identityId, options.signal));
  }

  /**
   * {@link resolve}; `current`: the version a stapled status token checked just now names as
   * current (`verify` at `higher`). A cached copy of exactly that version and digest is used
   * without a request, since the token proves it current, and the log check may take it as the
   * newest. Never taken from a caller: only a checked token may say a copy is current.
   */
  async #resolve(
    identityId: string,
    options: ResolveOptions,
    current: CurrentVersion | undefined,
    trustedKeys: () => Promise<KeysAnswer>,
  ): Promise<ResolveResult> {
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

    const keys = await trustedKeys();
    if (keys && !(keys instanceof KeyRing)) return keys;

    const stored = this.#cache?.get(url);
    const supplied = options.record;
    // A shared cache may hold a copy checked with other keys, or none: such a copy is not reused,
    // though it still counts as a version seen before. A supplied record is decided on as given.
    const cached = !supplied && stored && this.#acceptable(stored, keys) ? stored : undefined;
    const now = this.#now();
    const provenCurrent =
      cached &&
      current !== undefined &&
      cached.record.record_version === current.record_version &&
      cached.record.digest === current.digest;
    if (
      cached &&
      (provenCurrent ||
        (consequence === "lower" && isFresh(cached, now) && (maxAge === undefined || copyAge(cached, now) <= maxAge)))
    ) {
      const how = { from_cache: true, revalidated: false, attempts: 0 };
      return this.#confirm(identityId, cached, undefined, url, now, how, keys, options, current);
    }

    const headers: Record<string, string> = { accept: "application/json" };
    if (cached?.etag && consequence !== "higher") headers["if-none-match"] = cached.etag;
    const answer = supplied
      ? { ok: true as const, response: suppliedResponse(supplied), attempts: 0 }
      : await fetchWithRetry(url, { headers }, this.#http, options.signal);
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
      const logIndex = parseLogIndex(response.headers.get("passport-log-index")) ?? cached.logIndex;
      const entry: CacheEntry = {
        ...cached,
        ...freshness,
        ...(logIndex !== undefined ? { logIndex } : {}),
        proof: { ...(cached.proof as Proof), history: "not_checked" },
      };
      if (directives.maxAge === undefined) delete entry.maxAge;
      const how = { from_cache: false, revalidated: true, attempts };
      const result = await this.#confirm(identityId, entry, undefined, url, confirmedAt, how, keys, options, current);
      if (result.outcome === "resolved") this.#store(url, entry, directives.noStore);
      return result;
    }

    if (response.status === 200) {
      const how = { from_cache: false, revalidated: false, attempts };
      const read = await readStrictJson(response, this.#http.maxBytes);
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
      const result = await this.#confirm(identityId, entry, stored, url, confirmedAt, how, keys, options, current);
      // A record that fails its proof never replaces the copy it was compared with; a supplied one never enters.
      if (result.outcome === "resolved" && !supplied) this.#store(url, entry, directives.noStore);
      if (supplied && result.source) result.source.supplied = true;
      return result;
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
    return (await this.#verify(identityId, expectation)).outcome;
  }

  /** {@link verify}, also returning the record decided on and the status token relied on (for `decide`). */
  async #verify(identityId: string, expectation: DecisionExpectation): Promise<Verified> {
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
    const trustedKeys = this.#keysOnce(identityId, expectation.signal);
    const stapled =
      expectation.consequence === "higher" && expectation.statusToken
        ? await this.#checkStapled(identityId, expectation.statusToken, await trustedKeys(), statusMaxAge)
        : undefined;
    const named =
      stapled?.ok &&
      stapled.kid !== undefined &&
      stapled.claims.publication === "published" &&
      stapled.claims.record_version !== undefined &&
      stapled.claims.digest !== undefined
        ? { record_version: stapled.claims.record_version, digest: stapled.claims.digest }
        : undefined;
    const result = await this.#resolve(
      identityId,
      {
        ...(expectation.consequence ? { consequence: expectation.consequence } : {}),
        ...(expectation.maxAge !== undefined ? { maxAge: expectation.maxAge } : {}),
        ...(expectation.signal ? { signal: expectation.signal } : {}),
        ...(expectation.history ? { history: true } : {}),
        ...(expectation.seen ? { seen: expectation.seen } : {}),
        ...(expectation.record ? { record: expectation.record } : {}),
      },
      named,
      trustedKeys,
    );
    if (result.outcome === "not_found") {
      return { outcome: await this.#issuancePending(identityId, result, await trustedKeys(), expectation.signal) };
    }
    if (result.outcome !== "resolved") return { outcome: result };
    // Higher consequence: the record must be the one the service's current state names (docs/verifier.md, Current proof).
    let current: { stale?: StaleItem; proof?: StatusProof; token?: string } = {};
    if (expectation.consequence === "higher") {
      const proven = await this.#currentProof(
        identityId,
        result.record,
        expectation,
        statusMaxAge,
        stapled,
        await trustedKeys(),
      );
      if ("network" in proven) return { outcome: proven.network, record: result.record };
      current = proven;
      if (current.proof) result.proof.status = current.proof;
    }
    const currentAsOf = current.proof && !current.stale ? { current_as_of: current.proof.issued_at } : {};
    const verdict = {
      ...evaluate(result.record, expectation, result.source, this.#now(), current.stale),
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

  /**
   * One decision over both sides of a call (reciprocal trust, docs/reciprocal-trust.md): the API's
   * passport under the action's policy, and the calling agent's, which must have signed the
   * request with a key the service proved for it and meet the action's `caller` policy.
   * @example
   * const result = await verifier.decideCall({ policy, action: "refund", api: { identityId: ownId }, caller: { request } });
   * if (result.decision !== "allow") refuse(result.receipt);
   */
  decideCall(request: DecideCallRequest): Promise<CallDecisionResult> {
    return decideCall(request, {
      ...(this.#callerSignatures ? { signatures: this.#callerSignatures } : {}),
      now: this.#now,
      decide: (identityId, decideRequest) => this.#decide(identityId, decideRequest),
    });
  }

  /**
   * Decides `action` of `request.policy` on a passport: runs {@link verify} with the expectation
   * the policy gives for the action, evaluates the required authority, maps the outcome to a
   * decision by the policy's `outcomes` (default: the outcome's next step, `proceed` as `allow`),
   * and returns a receipt of what it relied on (docs/policy.md).
   * @example
   * const policy = loadPolicy(await readFile("policy.json", "utf8"));
   * const { decision, receipt } = await verifier.decide(id, { policy, action: "refund", amount: { value: "50.00", currency: "EUR" } });
   * if (decision !== "allow") refuse(decision);
   */
  async decide(identityId: string, request: DecideRequest): Promise<DecisionResult> {
    return (await this.#decide(identityId, request)).result;
  }

  /** {@link decide}, also returning the record decided on (`decideCall` reads the caller's keys from it). */
  async #decide(
    identityId: string,
    request: DecideRequest,
  ): Promise<{ result: DecisionResult; record?: PassportRecordView }> {
    const action = actionPolicyFor(request.policy, request.action);
    const expectation = expectationFor(action, request);
    const verified = await this.#verify(identityId, expectation);
    const result = await decision(identityId, request, action, expectation, verified, this.#now());
    return { result, ...(verified.record ? { record: verified.record } : {}) };
  }

  /**
   * The transparency log this verifier checks records against (its `log` option), or undefined
   * without one; `verifyReceipt` uses it to re-check a receipt's entry later.
   */
  async transparencyLog(): Promise<LogClient | undefined> {
    if (!this.#logOptions) return undefined;
    this.#log ??= logClientFor(this.resolver, this.#http, this.#logOptions);
    return (await this.#log).client;
  }

  /**
   * The current-proof check of a `higher` decision: a status token (the stapled one, else one
   * fetched from the resolver) checked offline against the pinned keys, not older than
   * `maxAgeSeconds`, stating this record's version and digest as the newest with nothing newer
   * owed. A failure to reach the status route is a network failure; any other failure is the
   * stale item returned.
   */
  async #currentProof(
    identityId: string,
    record: PassportRecordView,
    expectation: Expectation,
    maxAgeSeconds: number,
    stapled: StatusCheck | undefined,
    keys: KeysAnswer,
  ): Promise<{ network: NetworkFailure } | { stale?: StaleItem; proof?: StatusProof; token?: string }> {
    if (keys && !(keys instanceof KeyRing)) return { network: keys };
    let check: StatusCheck | undefined = stapled;
    let from: StatusProof["source"] = "stapled";
    let token = expectation.statusToken;
    if (expectation.statusToken && !check) {
      check = await checkStatusToken(expectation.statusToken, keys, identityId, this.#now(), maxAgeSeconds);
    }
    if (!check?.ok) {
      const fetched = await this.#fetchStatus(identityId, expectation.signal);
      if ("network" in fetched) return fetched;
      if ("unavailable" in fetched) {
        return { stale: { what: "status", problem: check?.problem ?? "unavailable", detail: fetched.unavailable } };
      }
      check = await checkStatusToken(fetched.token, keys, identityId, this.#now(), maxAgeSeconds);
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
  async #checkStapled(
    identityId: string,
    token: string,
    keys: KeysAnswer,
    maxAgeSeconds: number,
  ): Promise<StatusCheck | undefined> {
    if (keys && !(keys instanceof KeyRing)) return undefined;
    return checkStatusToken(token, keys, identityId, this.#now(), maxAgeSeconds);
  }

  /** Reads a status token from the resolver's status route. */
  async #fetchStatus(
    identityId: string,
    signal?: AbortSignal,
  ): Promise<{ network: NetworkFailure } | { unavailable: string } | { token: string }> {
    const fetched = await fetchStatusToken(this.resolver, identityId, this.#http, signal);
    return "network" in fetched ? { network: networkFailure(identityId, fetched.url, fetched.network) } : fetched;
  }

  /**
   * A record not found may be an issuance delay: when the resolver's status route answers a valid
   * token saying the id was issued and its first publication is pending, the outcome says so and
   * its next step is `delay`, not `deny`. Any other answer leaves the outcome as it is.
   */
  async #issuancePending(
    identityId: string,
    result: NotFound,
    keys: KeysAnswer,
    signal?: AbortSignal,
  ): Promise<NotFound> {
    if (!(keys instanceof KeyRing)) return result;
    const fetched = await this.#fetchStatus(identityId, signal);
    if (!("token" in fetched)) return result;
    const check = await checkStatusToken(fetched.token, keys, identityId, this.#now(), DEFAULT_STATUS_MAX_AGE_SECONDS);
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

  /**
   * The proof checks that follow a record's own: against versions seen before (the caller's and
   * the cached copy it replaces), then, when asked for, against the published history. Fills
   * `entry.proof` with what was established.
   */
  async #confirm(
    identityId: string,
    entry: CacheEntry,
    replaced: CacheEntry | undefined,
    url: string,
    now: number,
    how: Pick<ProofSource, "from_cache" | "revalidated" | "attempts">,
    keys: KeyRing | undefined,
    options: ResolveOptions,
    current: CurrentVersion | undefined,
  ): Promise<ResolveResult> {
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
    const fail = (finding: ProofFinding | LogFinding) =>
      proofFailure(identityId, finding, source(entry, url, now, how));
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
      const answer = await fetchHistory(this.resolver, identityId, this.#http, options.signal);
      if (!answer.ok) {
        const { ok: _, url: historyUrl, ...failure } = answer;
        return networkFailure(identityId, historyUrl, failure);
      }
      const finding = await checkHistory(entry.record, answer.entries, keys, seen, this.#now());
      if (finding) return fail(finding);
      entry.proof = { ...(entry.proof as Proof), history: keys ? "verified" : "chain_only" };
    }
    const result = resolved(identityId, entry, url, now, how);
    if (this.#logOptions) {
      this.#log ??= logClientFor(this.resolver, this.#http, this.#logOptions);
      const { client, settings } = await this.#log;
      const check = await checkLog(
        client,
        settings,
        entry.record,
        entry.logIndex,
        this.#now(),
        options.signal,
        current,
      );
      if (!check.ok && "network" in check) return networkFailure(identityId, check.network.url, check.network.failure);
      if (!check.ok && "stale" in check) return proofFailure(identityId, check.stale, result.source);
      if (!check.ok) return fail(check.finding);
      result.proof.log = check.proof;
    }
    return result;
  }

  /** True when a cached copy was checked as this verifier requires, with a key it still trusts. */
  #acceptable(entry: CacheEntry, keys: KeyRing | undefined): boolean {
    const proof = entry.proof;
    if (!proof) return false;
    if (!keys) return true;
    return proof.signature === "verified" && proof.kid !== undefined && keys.key(proof.kid) !== undefined;
  }

  /** {@link #trustedKeys} for one call: looked up at most once, however many checks need the keys. */
  #keysOnce(identityId: string, signal?: AbortSignal): () => Promise<KeysAnswer> {
    let keys: Promise<KeysAnswer> | undefined;
    return () => {
      keys ??= this.#trustedKeys(identityId, signal);
      return keys;
    };
  }

  /** The trusted key ring: pinned, or read from the caller's URL when its copy has expired. */
  async #trustedKeys(identityId: string, signal?: AbortSignal): Promise<KeysAnswer> {
    const keys = this.#keys;
    if (keys.kind === "skipped") return undefined;
    if (keys.kind === "pinned") return keys.ring;
    const now = this.#now();
    if (keys.ring && now < keys.expiresAt) return keys.ring;
    const answer = await fetchWithRetry(keys.url, { headers: { accept: "application/json" } }, this.#http, signal);
    const failed = (detail: string, status?: number, kind: NetworkFailureKind = "unexpected_response") =>
      networkFailure(identityId, keys.url, {
        kind,
        attempts: answer.attempts,
        ...(status ? { status } : {}),
        detail: `the trusted keys at ${keys.url} could not be read: ${detail}`,
      });
    if (!answer.ok) {
      const { ok: _, problemType, ...failure } = answer;
      return networkFailure(identityId, keys.url, {
        ...failure,
        detail: `the trusted keys at ${keys.url} could not be read: ${failure.detail}`,
      });
    }
    if (answer.response.status !== 200) {
      await answer.response.body?.cancel();
      return failed(`HTTP ${answer.response.status}`, answer.response.status);
    }
    const read = await readStrictJson(answer.response, this.#http.maxBytes);
    if (!read.ok) return failed(read.problem, 200, readFailureKind(read));
    try {
      keys.ring = new KeyRing(read.value);
    } catch (error) {
      return failed(error instanceof Error ? error.message : "not a JWK Set", 200);
    }
    const maxAge = cacheDirectives(answer.response.headers.get("cache-control")).maxAge;
    keys.expiresAt = now + (maxAge ?? DEFAULT_JWKS_MAX_AGE_SECONDS) * 1000;
    return keys.ring;
  }

  #store(url: string, entry: CacheEntry, noStore: boolean): void {
    if (noStore) this.#cache?.delete(url);
    else this.#cache?.set(url, entry);
  }
}

/** The trusted keys, none (`skip-insecure`), or why they could not be read. */
type KeysAnswer = KeyRing | undefined | NetworkFailure;

/** A supplied record as the answer the resolver would have given: its bytes and its signature header. */
function suppliedResponse(record: SuppliedRecord): Response {
  return new Response(record.body, {
    status: 200,
    headers: record.signature ? { "passport-signature": record.signature } : {},
  });
}

function source(
  entry: Pick<CacheEntry, "confirmedAt" | "ageAtConfirmation" | "etag">,
  url: string,
  now: number,
  how: Pick<ProofSource, "from_cache" | "revalidated" | "attempts">,
): ProofSource {
  return {
    url,
    fetched_at: new Date(entry.confirmedAt).toISOString(),
    age_seconds: copyAge(entry, now),
    ...(entry.etag ? { etag: entry.etag } : {}),
    ...how,
  };
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
    source: source(entry, url, now, how),
    proof: { ...(entry.proof as Proof) },
  };
}

/**
 * A record whose proof failed, or is still propagating (`stale`): the finding is the outcome, and
 * its contents are not evaluated.
 */
function proofFailure(identityId: string, finding: ProofFinding | LogFinding, from: ProofSource): ProofFailure | Stale {
  return outcome<ProofFailure | Stale>({ ...finding, identity_id: identityId, source: from, findings: [finding] });
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
