// `@passport/verifier/provider`: the API provider's side of the call path (docs/reciprocal-trust.md,
// Call path). Hono middleware that decides every call over both sides with `Verifier.decideCall`:
// the caller's RFC 9421 / Web Bot Auth signature by a key the service proved for its agent
// passport, that passport under the action's policy, and this API's own passport with its stapled
// status token. The handler runs only on `allow` and reads the decision from the context; any
// other decision is an RFC 9457 problem naming the failed check and nothing more. Hono and
// web-bot-auth are optional peer dependencies of this subpath.
import type { Context, MiddlewareHandler } from "hono";
import { UnverifiedLookups } from "./call/lookup-budget.ts";
import { type WebBotAuthOptions, webBotAuth } from "./call/web-bot-auth.ts";
import type { CallerSignatures, LookupBudget, NonceStore } from "./caller.ts";
import type { CallDecisionResult } from "./decide-call.ts";
import { type StaplingOptions, StatusStapler } from "./hono.ts";
import type { PolicyDocument } from "./policy.ts";
import { STATUS_HEADER } from "./status.ts";
import type { Verifier } from "./verifier.ts";

export { type UnverifiedLookupOptions, UnverifiedLookups } from "./call/lookup-budget.ts";
export { MemoryNonceStore, type NonceStore, type WebBotAuthOptions, webBotAuth } from "./call/web-bot-auth.ts";
export type { LookupBudget } from "./caller.ts";

/** The methods whose calls are refused when replayed, unless `replay.methods` says otherwise: the unsafe ones. */
export const DEFAULT_REPLAY_METHODS: readonly string[] = ["POST", "PUT", "PATCH", "DELETE"];

/** What the handler reads: `c.get("passport")`. */
export type ProviderVariables = { passport: CallDecisionResult };

export interface ProviderOptions {
  /** The verifier deciding the calls (its cache is shared by every request this isolate serves). */
  verifier: Verifier;
  /** This API's passport. */
  identityId: string;
  policy: PolicyDocument;
  /** The policy action of a request: a fixed name, or per request (undefined: not a passport-checked route, passed on). */
  action: string | ((c: Context) => string | undefined);
  /** The call's amount and resource, for authority checks on the caller. */
  parameters?: (c: Context) => { amount?: { value: string; currency: string }; resource?: string } | undefined;
  /**
   * Staple this API's own status token to every answer (as `@passport/verifier/hono` does) and
   * decide this side on it: the stapling options without `identityId`; `false` to do neither.
   */
  stapling?: Omit<StaplingOptions, "identityId"> | false;
  /**
   * This API's public origin (`https://api.example`, no path): callers' signatures count only
   * for it, and the address verified is this origin with the request's path and query, whatever
   * the request's own URL, `Host` or `X-Forwarded-Host` say. Without it, the request's own URL
   * must be covered by a verified, fresh endpoint binding of this API's passport.
   */
  origin?: string;
  /**
   * Refuses a replayed call: a signature whose nonce `store` has seen within its window, or one
   * without a nonce, for the `methods` listed (default {@link DEFAULT_REPLAY_METHODS}). Share the
   * store across isolates (a Durable Object) for it to see every replay.
   */
  replay?: { store: NonceStore; methods?: readonly string[] };
  /**
   * Bounds the resolver lookups that requests not verified yet may cause (default: 2 a minute per
   * client, 10 in total, per isolate); `false` for none. The provider's own status refreshes never count.
   */
  lookups?: LookupBudget | false;
  /** The client a request comes from, for `lookups`; default its `CF-Connecting-IP` header. */
  client?: (c: Context) => string | undefined;
  /** Checks callers' signatures; default `webBotAuth(signatureOptions)`. */
  signatures?: CallerSignatures;
  /** Options of the default checker (the key directory fetch, a nonce store). */
  signatureOptions?: WebBotAuthOptions;
  /** Told of every refused call, with the decision (the middleware itself never logs). */
  onRefused?: (result: CallDecisionResult) => void;
}

const PROBLEM_BASE = "urn:svc:passport:problem:";

interface Refusal {
  status: number;
  type: string;
  title: string;
  detail: string;
  retryAfter?: number;
}

/** The answer for a decision other than `allow`: which check failed, in words that reveal nothing else. */
function refusal(result: CallDecisionResult): Refusal & { check: string } {
  const failed = result.caller_problem;
  if (failed?.check === "caller.signature") {
    const retry = failed.problem === "key_unavailable" || failed.problem === "lookups_exhausted";
    return {
      check: failed.check,
      status: retry ? 503 : 401,
      type: `${PROBLEM_BASE}caller-signature`,
      title: "Caller signature not accepted",
      detail: SIGNATURE_DETAIL[failed.problem] ?? "The request's signature could not be accepted.",
      ...(retry ? { retryAfter: 5 } : {}),
    };
  }
  const apiFailed = result.decision !== "allow" && result.sides.api.outcome !== "ok";
  if (apiFailed) {
    return {
      check: "api.passport",
      status: 503,
      type: `${PROBLEM_BASE}unavailable`,
      title: "Unavailable",
      detail: "This API cannot currently establish its own passport; try again shortly.",
      retryAfter: 5,
    };
  }
  const check = failed?.check ?? "caller.passport";
  const retry = result.decision === "delay" || result.decision === "re-resolve";
  return {
    check,
    status: retry ? 503 : 403,
    type: `${PROBLEM_BASE}caller-passport`,
    title: "Caller passport not accepted",
    detail:
      check === "caller.uses_link"
        ? "The calling agent's passport does not declare this API among the passports it uses."
        : retry
          ? "The calling agent's passport could not be confirmed now; try again shortly."
          : "The calling agent's passport does not meet this action's policy.",
    ...(retry ? { retryAfter: 5 } : {}),
  };
}

const SIGNATURE_DETAIL: Record<string, string> = {
  signature_missing:
    "This action needs a request signed by the calling agent (RFC 9421, Web Bot Auth) naming its passport in Passport-Agent.",
  signature_invalid: "The request's signature does not verify.",
  signature_expired: "The request's signature is outside its validity window; sign it again.",
  signature_replayed: "This signature was already used.",
  key_not_proven: "The request is signed with a key not proven for the calling passport.",
  key_unavailable: "The calling passport's key directory could not be read now; try again shortly.",
  lookups_exhausted: "The request's signing key could not be checked now; try again shortly.",
};

/**
 * The request as the caller must have signed it: at the public origin when one is configured.
 * The path and query are set on a copy of the origin's URL, never resolved against it, so no
 * path (`//other.example/`, `/\\other.example`) can name another host.
 */
function asSigned(request: Request, origin: URL | undefined): Request {
  if (!origin) return request;
  const arrived = new URL(request.url);
  const url = new URL(origin);
  url.pathname = arrived.pathname;
  url.search = arrived.search;
  return new Request(url, { method: request.method, headers: request.headers });
}

/** The configured public origin, checked: an http(s) origin and nothing else. */
function publicOrigin(origin: string | undefined): URL | undefined {
  if (origin === undefined) return undefined;
  const url = URL.canParse(origin) ? new URL(origin) : undefined;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.href !== `${url.origin}/`) {
    throw new TypeError(`origin: "${origin}" is not an origin (scheme, host and port only)`);
  }
  return url;
}

/**
 * Hono middleware deciding each call over both sides; the handler reads `c.get("passport")`.
 * @example
 * import { passportProvider } from "@passport/verifier/provider";
 * const verifier = new Verifier({ resolver, jwks });
 * app.use("/v1/*", passportProvider({ verifier, identityId: "psp_…", policy, action: "orders.read", stapling: { resolver } }));
 * app.get("/v1/orders", (c) => c.json({ caller: c.get("passport").receipt.caller?.identity_id }));
 */
export function passportProvider(options: ProviderOptions): MiddlewareHandler<{ Variables: ProviderVariables }> {
  const stapler =
    options.stapling === false || options.stapling === undefined
      ? undefined
      : // Refreshed 40 s before expiry (at 20 s of age), so the token this side is decided on is
        // always younger than the 30 s a `higher` decision accepts by default, refresh or not:
        // an older one would send the API side to the resolver itself.
        new StatusStapler({ refreshBeforeSeconds: 40, ...options.stapling, identityId: options.identityId });
  const header = (options.stapling ? options.stapling.header : undefined) ?? STATUS_HEADER;
  const signatures = options.signatures ?? webBotAuth(options.signatureOptions);
  const origin = publicOrigin(options.origin);
  const lookups = options.lookups === false ? undefined : (options.lookups ?? new UnverifiedLookups());
  const replayMethods = new Set(options.replay?.methods ?? DEFAULT_REPLAY_METHODS);
  const clientOf = options.client ?? ((c: Context) => c.req.header("cf-connecting-ip"));
  return async (c, next) => {
    const action = typeof options.action === "function" ? options.action(c) : options.action;
    let waitUntil: ((promise: Promise<unknown>) => void) | undefined;
    try {
      const ctx = c.executionCtx;
      waitUntil = (promise) => ctx.waitUntil(promise);
    } catch {
      // Not on Workers: nothing ends a refresh early.
    }
    const token = stapler ? await stapler.current(waitUntil) : undefined;
    const staple = (response: Response) => {
      if (token) response.headers.set(header, token);
      return response;
    };
    if (action === undefined) {
      await next();
      if (token) c.res.headers.set(header, token);
      return;
    }
    const parameters = options.parameters?.(c);
    const client = clientOf(c);
    const replay = options.replay && replayMethods.has(c.req.method.toUpperCase()) ? options.replay.store : undefined;
    const result = await options.verifier.decideCall({
      policy: options.policy,
      action,
      api: { identityId: options.identityId, ...(token ? { statusToken: token } : {}) },
      caller: {
        request: asSigned(c.req.raw, origin),
        ...(origin ? { origin: origin.origin } : {}),
        ...(client ? { client } : {}),
        ...(replay ? { nonces: replay } : {}),
      },
      ...(lookups ? { lookups } : {}),
      signatures,
      ...(parameters?.amount ? { amount: parameters.amount } : {}),
      ...(parameters?.resource ? { resource: parameters.resource } : {}),
    });
    if (result.decision !== "allow") {
      options.onRefused?.(result);
      const problem = refusal(result);
      const headers: Record<string, string> = {
        "content-type": "application/problem+json",
        "cache-control": "no-store",
      };
      if (problem.retryAfter) headers["retry-after"] = String(problem.retryAfter);
      if (problem.status === 401) headers["www-authenticate"] = 'Signature realm="passport"';
      return staple(
        new Response(
          JSON.stringify({
            type: problem.type,
            title: problem.title,
            status: problem.status,
            detail: problem.detail,
            check: problem.check,
            decision: result.decision,
          }),
          { status: problem.status, headers },
        ),
      );
    }
    c.set("passport", result);
    await next();
    if (token) c.res.headers.set(header, token);
  };
}
