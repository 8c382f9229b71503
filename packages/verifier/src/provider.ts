// `@passport/verifier/provider`: the API provider's side of the call path (docs/reciprocal-trust.md,
// Call path). Hono middleware that decides every call over both sides with `Verifier.decideCall`:
// the caller's RFC 9421 / Web Bot Auth signature by a key the service proved for its agent
// passport, that passport under the action's policy, and this API's own passport with its stapled
// status token. The handler runs only on `allow` and reads the decision from the context; any
// other decision is an RFC 9457 problem naming the failed check and nothing more. Hono and
// web-bot-auth are optional peer dependencies of this subpath.
import type { Context, MiddlewareHandler } from "hono";
import { type WebBotAuthOptions, webBotAuth } from "./call/web-bot-auth.ts";
import type { CallerSignatures } from "./caller.ts";
import type { CallDecisionResult } from "./decide-call.ts";
import { type StaplingOptions, StatusStapler } from "./hono.ts";
import type { PolicyDocument } from "./policy.ts";
import { STATUS_HEADER } from "./status.ts";
import type { Verifier } from "./verifier.ts";

export { MemoryNonceStore, type NonceStore, type WebBotAuthOptions, webBotAuth } from "./call/web-bot-auth.ts";

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
   * The public origin callers sign (`@authority`), when it differs from the URL the request
   * arrives at: behind a proxy, or in local development.
   */
  origin?: string;
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
    const retry = failed.problem === "key_unavailable";
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
};

/** The request as the caller signed it: at the public origin when one is configured. */
function asSigned(request: Request, origin: string | undefined): Request {
  if (!origin) return request;
  const url = new URL(request.url);
  const publicUrl = new URL(`${url.pathname}${url.search}`, origin);
  return new Request(publicUrl, { method: request.method, headers: request.headers });
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
      : new StatusStapler({ ...options.stapling, identityId: options.identityId });
  const header = (options.stapling ? options.stapling.header : undefined) ?? STATUS_HEADER;
  const signatures = options.signatures ?? webBotAuth(options.signatureOptions);
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
    const result = await options.verifier.decideCall({
      policy: options.policy,
      action,
      api: { identityId: options.identityId, ...(token ? { statusToken: token } : {}) },
      caller: { request: asSigned(c.req.raw, options.origin) },
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
