import { identityIdDefect, problem, type StatusAuthorityApi } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS, malformedIdAnswer, problemAnswer, problemHeaders } from "../http.ts";

export const status = new Hono<{ Bindings: Env }>();

/** The window of `STATUS_PER_CLIENT` in wrangler.toml (`period = 60`). */
const STATUS_LIMIT_PERIOD_SECONDS = 60;

const NO_STORE = cacheHeaders("none");
const TOKEN_HEADERS = { ...CORS_HEADERS, ...NO_STORE, "content-type": "application/json" };
const REFUSED_BODY = JSON.stringify(
  problem("rate-limited", {
    detail: `Too many status requests from your address. Wait ${STATUS_LIMIT_PERIOD_SECONDS} seconds, or reuse a token until shortly before its exp.`,
  }),
);
const REFUSED_HEADERS = { ...problemHeaders(NO_STORE), "retry-after": String(STATUS_LIMIT_PERIOD_SECONDS) };
const NEVER_ISSUED_DETAIL =
  "No passport has ever been issued with this identity id. (A passport that is issued but not yet published answers a status token saying pending.)";
const UNAVAILABLE = () =>
  problemAnswer(
    problem("unavailable", { detail: "The passport's current status could not be read; try again shortly." }),
    { ...NO_STORE, "retry-after": "5" },
  );

/**
 * `GET {base}/api/p/{identity_id}/status`: the passport's current status token, a short-lived
 * compact JWS signed with the record key, issued by the passport's publication sequencer from the
 * control plane's authoritative state (docs/freshness.md, Status token). `no-store` everywhere:
 * 200 `{identity_id, token}` for a passport that is published or pending (the token says which),
 * 404 `identity-not-found` for an id never issued, 400 for a malformed id, 429 over the limit, 503
 * when the state cannot be read.
 *
 * Requests are limited per client address (`STATUS_PER_CLIENT`), before anything else: each one
 * reaches the passport's Durable Object, and nothing caches it. A request without
 * `cf-connecting-ip` never crossed Cloudflare's edge (a test, a service binding) and is not
 * limited. Plain GETs are answered here without the router (`fastResolve`, docs/resolver.md);
 * the Hono route below answers the rest (HEAD, percent-encoded ids) with the same function.
 */
export async function answerStatus(env: Env, identityId: string, address: string | null): Promise<Response> {
  if (address) {
    const { success } = await env.STATUS_PER_CLIENT.limit({ key: `client:${address}` });
    if (!success) return new Response(REFUSED_BODY, { status: 429, headers: REFUSED_HEADERS });
  }
  const defect = identityIdDefect(identityId);
  if (defect) return malformedIdAnswer(defect);
  const authority = env.PUBLICATION_SEQUENCER.getByName(identityId) as unknown as StatusAuthorityApi;
  let answer: Awaited<ReturnType<StatusAuthorityApi["status"]>>;
  try {
    answer = await authority.status(identityId);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", event: "status_unavailable", message: String(error) }));
    return UNAVAILABLE();
  }
  if (!answer.found) {
    return problemAnswer(problem("identity-not-found", { detail: NEVER_ISSUED_DETAIL }), NO_STORE);
  }
  return new Response(JSON.stringify({ identity_id: answer.identity_id, token: answer.token }), {
    headers: TOKEN_HEADERS,
  });
}

status.get("/:id/status", (c) => answerStatus(c.env, c.req.param("id"), c.req.header("cf-connecting-ip") ?? null));
