import { problem, problemResponse } from "@passport/domain";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.ts";

/**
 * The window of every limiter in workers/control/wrangler.toml (`period = 60`); a refused caller
 * is told to wait one window. The binding does not say when its window rolls over.
 */
export const RATE_LIMIT_PERIOD_SECONDS = 60;

type LimiterName = { [K in keyof Env]-?: Env[K] extends RateLimit ? K : never }[keyof Env];

export interface Limit {
  limiter: LimiterName;
  /** The counter to charge; `undefined` skips this limit for the request. */
  key: (c: Context<AppEnv>) => string | undefined;
}

/**
 * The caller's address as Cloudflare's edge sets it (a client cannot choose it there). It is
 * absent only on requests that never crossed the edge, such as tests calling the Worker directly;
 * those skip the per-client limits, and the ceilings still apply.
 */
export const byClient = (c: Context<AppEnv>) => {
  const address = c.req.header("cf-connecting-ip");
  return address ? `client:${address}` : undefined;
};
export const bySubject = (c: Context<AppEnv>) => `subject:${c.get("principal").subject}`;

export const RETRY_DETAIL = `Too many requests. Wait ${RATE_LIMIT_PERIOD_SECONDS} seconds before trying again.`;

/** The default refusal: a 429 problem document with `Retry-After`. */
async function refusedProblem(_c: Context<AppEnv>): Promise<Response> {
  return problemResponse(problem("rate-limited", { detail: RETRY_DETAIL }), {
    "retry-after": String(RATE_LIMIT_PERIOD_SECONDS),
  });
}

/**
 * Charges each limit in order for requests whose method is in `methods`, and answers 429
 * `rate-limited` with `Retry-After` at the first one that refuses; later limits are not charged,
 * so a caller over its own limit does not use up a shared ceiling.
 */
export function limitRequests(
  methods: readonly string[],
  limits: Limit[],
  refuse: (c: Context<AppEnv>) => Promise<Response> = refusedProblem,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (methods.includes(c.req.method)) {
      for (const { limiter, key } of limits) {
        const counter = key(c);
        if (counter === undefined) continue;
        const { success } = await c.env[limiter].limit({ key: counter });
        if (!success) {
          console.warn(JSON.stringify({ level: "warn", event: "rate_limited", limiter }));
          return refuse(c);
        }
      }
    }
    await next();
  };
}

export const POST = ["POST"];
const WRITES = ["POST", "PUT", "PATCH", "DELETE"];

/** The Dashboard's sign-in form post, per client: it slows guessing of tokens. */
export const limitSignIn = limitRequests(POST, [{ limiter: "SIGN_IN_PER_CLIENT", key: byClient }]);

/**
 * Every write under `/v1`, per authenticated subject; mount it after authentication.
 * @example
 * app.use("/v1/*", limitWrites);
 */
export const limitWrites = limitRequests(WRITES, [{ limiter: "WRITES_PER_SUBJECT", key: bySubject }]);

/**
 * Charges one more write to the caller's `WRITES_PER_SUBJECT` counter: each item of a batch after
 * the first (the request itself was charged by `limitWrites`), so a batch of 100 costs what 100
 * requests would. False when the limiter refuses.
 */
export async function chargeWrite(c: Context<AppEnv>): Promise<boolean> {
  const { success } = await c.env.WRITES_PER_SUBJECT.limit({ key: bySubject(c) });
  return success;
}
