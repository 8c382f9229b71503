import { identityIdDefect, problem, type StatusAuthorityApi } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS, malformedIdAnswer, problemHeaders } from "../http.ts";
import { CLIENT_LIMIT_PERIOD_SECONDS, limitClient, refusal } from "../rate-limit.ts";

export const status = new Hono<{ Bindings: Env }>();

const NO_STORE = cacheHeaders("none");
/**
 * The sequencer's answers (a token, or never issued) are shared by the edge for one second, never
 * by browsers: Workers Caching collapses the requests for one URL, so however popular a passport,
 * its object is asked about once a second per cache at most, far below the Durable Object soft
 * limit, at the cost of answers up to a second older (docs/freshness.md, Status token). No
 * Cache-Tag: a second's lifetime needs no purge, and purges are a budget (docs/resolver.md).
 */
const STATUS_EDGE_SECONDS = 1;
const SHARED_BRIEFLY = {
  "cache-control": "no-store",
  "cloudflare-cdn-cache-control": `public, max-age=${STATUS_EDGE_SECONDS}, stale-if-error=0`,
};
const TOKEN_HEADERS = { ...CORS_HEADERS, ...SHARED_BRIEFLY, "content-type": "application/json" };
const STATUS_REFUSED = refusal(
  `Too many status requests from your address. Wait ${CLIENT_LIMIT_PERIOD_SECONDS} seconds, or reuse a token until shortly before its exp.`,
);
// Fixed text, so the problem answers are built once.
const NEVER_ISSUED = problem("identity-not-found", {
  detail:
    "No passport has ever been issued with this identity id. (A passport that is issued but not yet published answers a status token saying pending.)",
});
const NEVER_ISSUED_BODY = JSON.stringify(NEVER_ISSUED);
const NEVER_ISSUED_HEADERS = problemHeaders(SHARED_BRIEFLY);
const UNAVAILABLE = problem("unavailable", {
  detail: "The passport's current status could not be read; try again shortly.",
});
const UNAVAILABLE_BODY = JSON.stringify(UNAVAILABLE);
const UNAVAILABLE_HEADERS = problemHeaders({ ...NO_STORE, "retry-after": "5" });

/**
 * `GET {base}/api/p/{identity_id}/status`: the passport's current status token, a short-lived
 * compact JWS signed with the record key, issued by the passport's publication sequencer from the
 * control plane's authoritative state (docs/freshness.md, Status token): 200 `{identity_id, token}`
 * for a passport that is published or pending (the token says which) and 404 `identity-not-found`
 * for an id never issued, both shared at the edge for STATUS_EDGE_SECONDS and `no-store` for
 * browsers; 400 for a malformed id; 429 over the limit and 503 when the state cannot be read, `no-store`.
 *
 * Requests for a well-formed id that reach the Worker are limited per client address
 * (`STATUS_PER_CLIENT`, `limitClient`) before the sequencer is asked. A malformed id touches no object and is answered first, without counting. Plain GETs are answered here without the router (`fastResolve`, docs/resolver.md);
 * the Hono route below answers the rest (HEAD, percent-encoded ids) with the same function.
 */
export async function answerStatus(env: Env, identityId: string, address: string | null): Promise<Response> {
  const defect = identityIdDefect(identityId);
  if (defect) return malformedIdAnswer(defect);
  const refused = await limitClient(env.STATUS_PER_CLIENT, address, STATUS_REFUSED);
  if (refused) return refused;
  const authority = env.PUBLICATION_SEQUENCER.getByName(identityId) as unknown as StatusAuthorityApi;
  let answer: Awaited<ReturnType<StatusAuthorityApi["status"]>>;
  try {
    answer = await authority.status(identityId);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", event: "status_unavailable", message: String(error) }));
    return new Response(UNAVAILABLE_BODY, { status: UNAVAILABLE.status, headers: UNAVAILABLE_HEADERS });
  }
  if (!answer.found) {
    return new Response(NEVER_ISSUED_BODY, { status: NEVER_ISSUED.status, headers: NEVER_ISSUED_HEADERS });
  }
  return new Response(JSON.stringify({ identity_id: answer.identity_id, token: answer.token }), {
    headers: TOKEN_HEADERS,
  });
}

status.get("/:id/status", (c) => answerStatus(c.env, c.req.param("id"), c.req.header("cf-connecting-ip") ?? null));
