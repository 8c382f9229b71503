import { problem } from "@passport/domain";
import type { MiddlewareHandler } from "hono";
import { cacheHeaders } from "./edge-cache.ts";
import { problemHeaders } from "./http.ts";

/** The window of `QUERIES_PER_CLIENT` in wrangler.toml (`period = 60`); a refused client waits one window. */
const QUERY_LIMIT_PERIOD_SECONDS = 60;

const REFUSED_BODY = JSON.stringify(
  problem("rate-limited", {
    detail: `Too many queries from your address. Wait ${QUERY_LIMIT_PERIOD_SECONDS} seconds before trying again.`,
  }),
);
const REFUSED_HEADERS = {
  ...problemHeaders(cacheHeaders("none")),
  "retry-after": String(QUERY_LIMIT_PERIOD_SECONDS),
};

/**
 * Limits, per client address, the query routes whose every new query string is a new edge-cache
 * key, so the cache cannot absorb a flood of them (docs/limits.md). Only requests that reach the
 * Worker are counted: repeats the edge cache answers never run it. A request without
 * `cf-connecting-ip` never crossed Cloudflare's edge (a test, a service binding) and is not
 * limited. The record route is answered before the router and never pays for this call.
 * @example
 * app.use("/api/agent-envelope", limitQueries);
 */
export const limitQueries: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const address = c.req.header("cf-connecting-ip");
  if (address) {
    const { success } = await c.env.QUERIES_PER_CLIENT.limit({ key: `client:${address}` });
    if (!success) return new Response(REFUSED_BODY, { status: 429, headers: REFUSED_HEADERS });
  }
  await next();
};
