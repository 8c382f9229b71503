import { problem } from "@passport/domain";
import type { MiddlewareHandler } from "hono";
import { cacheHeaders } from "./edge-cache.ts";
import { problemHeaders } from "./http.ts";

/** The window of every per-client limit of the resolver in wrangler.toml (`period = 60`); a refused client waits one window. */
export const CLIENT_LIMIT_PERIOD_SECONDS = 60;

/** A prepared 429 answer: its body and headers are built once, with the route's own advice. */
export interface Refusal {
  body: string;
  headers: Record<string, string>;
}

export function refusal(detail: string): Refusal {
  return {
    body: JSON.stringify(problem("rate-limited", { detail })),
    headers: { ...problemHeaders(cacheHeaders("none")), "retry-after": String(CLIENT_LIMIT_PERIOD_SECONDS) },
  };
}

/**
 * Counts one request of the client at `address` against `limiter`: the refusal's 429 when over the
 * limit, undefined otherwise. A request without `cf-connecting-ip` never crossed Cloudflare's edge
 * (a test, a service binding) and is not limited.
 */
export async function limitClient(
  limiter: RateLimit,
  address: string | null | undefined,
  refused: Refusal,
): Promise<Response | undefined> {
  if (!address) return undefined;
  const { success } = await limiter.limit({ key: `client:${address}` });
  return success ? undefined : new Response(refused.body, { status: 429, headers: refused.headers });
}

const QUERIES_REFUSED = refusal(
  `Too many queries from your address. Wait ${CLIENT_LIMIT_PERIOD_SECONDS} seconds before trying again.`,
);

/**
 * Limits, per client address, the query routes whose every new query string is a new edge-cache
 * key, so the cache cannot absorb a flood of them (docs/limits.md). Only requests that reach the
 * Worker are counted: repeats the edge cache answers never run it (`limitClient`). The record route is answered before the router and never pays for this call.
 * @example
 * app.use("/api/agent-envelope", limitQueries);
 */
export const limitQueries: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const refused = await limitClient(c.env.QUERIES_PER_CLIENT, c.req.header("cf-connecting-ip"), QUERIES_REFUSED);
  if (refused) return refused;
  await next();
};
