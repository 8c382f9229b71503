/**
 * The `Verifier`: the options it is made with, and the public methods, each handed to the module
 * that does that one job (resolve-record.ts, verify.ts, decide.ts, decide-call.ts).
 */
import { RecordCache, type RecordCacheStore } from "./cache.ts";
import type { CallerSignatures } from "./caller.ts";
import { recordUrl, type VerifierContext } from "./context.ts";
import { type DecideRequest, type DecisionResult, decide } from "./decide.ts";
import { type CallDecisionResult, type DecideCallRequest, decideCall } from "./decide-call.ts";
import { type Expectation, requireDuration } from "./expectation.ts";
import {
  coalescing,
  DEFAULT_MAX_BYTES,
  type FetchLike,
  type HttpPolicy,
  insecureAddress,
  platformFetch,
} from "./http.ts";
import type { JwkSet } from "./keys.ts";
import { type LogOptions, type LogSettings, logClientFor } from "./log/check.ts";
import type { LogClient } from "./log/client.ts";
import type { VerifyOutcome } from "./outcome.ts";
import type { ResolveOptions, ResolveResult } from "./resolution.ts";
import { resolveRecord } from "./resolve-record.ts";
import { TrustedKeys } from "./trusted-keys.ts";
import { verifyRecord } from "./verify.ts";

export type { Resolved, ResolveOptions, ResolveResult } from "./resolution.ts";

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
  /**
   * Where records read are kept: a `RecordCache` in memory (the default; share one between
   * verifiers), any other {@link RecordCacheStore} (KV, the Cache API), or `false` for none.
   */
  cache?: RecordCacheStore | false;
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
  readonly #context: VerifierContext;
  readonly #callerSignatures: CallerSignatures | undefined;

  constructor(options: VerifierOptions) {
    const unsafe = insecureAddress(options.resolver);
    if (unsafe) throw new TypeError(`resolver: "${options.resolver}" ${unsafe}`);
    const resolver = options.resolver.replace(/\/+$/, "");
    this.resolver = resolver;
    const http: HttpPolicy = {
      fetch: coalescing(options.fetch ?? platformFetch),
      timeoutMs: options.timeoutMs ?? 5000,
      retries: options.retries ?? 2,
      retryDelayMs: options.retryDelayMs ?? 250,
      maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    };
    const cache = options.cache === false ? undefined : (options.cache ?? new RecordCache());
    const now = options.now ?? Date.now;
    const logOptions = options.log;
    if (logOptions) requireDuration(logOptions.maxAge, "log.maxAge");
    this.#callerSignatures = options.callerSignatures;
    // The log client is made on first use, once: its options are checked then, and its answer kept.
    let log: Promise<{ client: LogClient; settings: LogSettings }> | undefined;
    this.#context = {
      resolver,
      http,
      now,
      cache,
      keys: new TrustedKeys(options, http, now),
      log: logOptions ? () => (log ??= logClientFor(resolver, http, logOptions)) : undefined,
    };
  }

  /** The address of a passport's public record at this resolver. */
  recordUrl(identityId: string): string {
    return recordUrl(this.resolver, identityId);
  }

  /**
   * Makes the cached copy of a passport's record stale at once, so the next check asks the
   * resolver (with the copy's ETag) however fresh the copy was: what a change notification asks
   * for (`receiveNotification`). The copy stays as the version seen before, so an older record
   * served later is still caught as a rollback.
   */
  async invalidate(identityId: string): Promise<void> {
    const cache = this.#context.cache;
    if (!cache) return;
    const url = this.recordUrl(identityId);
    const entry = await cache.get(url);
    if (entry && entry.stale > 0) await cache.set(url, { ...entry, stale: 0 });
  }

  /** Settings shared with the other requests this verifier makes (the envelope). */
  get http(): HttpPolicy {
    return this.#context.http;
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
    const keys = this.#context.keys.once(identityId, options.signal);
    return resolveRecord(this.#context, identityId, options, { current: undefined, keys });
  }

  /**
   * The pre-call check (spec 4.6 steps 2 to 4): resolves the passport under the expectation's
   * consequence policy and compares it with what the decision needs.
   * @example
   * const result = await verifier.verify(id, { family: "api", evidence: [{ claim: "organisation.domain_control", maxAge: "30d" }] });
   * result.outcome; // "ok", "missing_evidence", "stale", ...
   */
  async verify(identityId: string, expectation: Expectation = {}): Promise<VerifyOutcome> {
    return (await verifyRecord(this.#context, identityId, expectation)).outcome;
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
    return decideCall(this.#context, request, this.#callerSignatures);
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
    return (await decide(this.#context, identityId, request)).result;
  }

  /**
   * The transparency log this verifier checks records against (its `log` option), or undefined
   * without one; `verifyReceipt` uses it to re-check a receipt's entry later.
   */
  async transparencyLog(): Promise<LogClient | undefined> {
    return (await this.#context.log?.())?.client;
  }
}
