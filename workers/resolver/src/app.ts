import { problem } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "./edge-cache.ts";
import { ALLOWED_METHODS, CORS_HEADERS, PREFLIGHT_HEADERS, problemAnswer } from "./http.ts";
import { limitQueries } from "./rate-limit.ts";
import { badge } from "./routes/badge.ts";
import { envelope } from "./routes/envelope.ts";
import { feed } from "./routes/feed.ts";
import { guidance } from "./routes/guidance.tsx";
import { history } from "./routes/history.ts";
import { log } from "./routes/log.ts";
import { pages } from "./routes/pages.tsx";
import { passports } from "./routes/passports.ts";
import { schemas } from "./routes/schemas.ts";
import { signatureAgentCards } from "./routes/signature-agent-card.ts";
import { signing } from "./routes/signing.ts";
import { status } from "./routes/status.ts";

export const app = new Hono<{ Bindings: Env }>();

const HEALTH_HEADERS = { ...CORS_HEADERS, ...cacheHeaders("none"), "content-type": "application/json" };

app.get("/health", () => new Response('{"status":"ok"}', { headers: HEALTH_HEADERS }));
// No icon: an empty answer, cached like the pages, keeps browsers' automatic request from a 404.
app.get("/favicon.ico", () => new Response(null, { status: 204, headers: cacheHeaders("stable") }));
// Query routes a new query string sends past the edge cache (docs/limits.md).
app.use("/api/agent-envelope", limitQueries);
app.use("/api/p/:id/history.json", limitQueries);
app.use("/api/feed.json", limitQueries);
app.route("/api/p", passports);
app.route("/api/p", history);
app.route("/api/p", badge);
app.route("/api/p", status);
app.route("/api/p", signatureAgentCards);
app.route("/api", feed);
app.route("/.well-known", signing);
app.route("/log", log);
app.route("/api/agent-envelope", envelope);
app.route("/guidance", guidance);
app.route("/schemas", schemas);
app.route("/", pages);

/**
 * Only GET routes are registered, so each GET matches exactly one handler (Hono's fast path).
 * Any other method lands here: on a path that exists it is a preflight (OPTIONS) or a 405, on
 * any other path a 404. Nothing on the resolver accepts a write.
 */
app.notFound((c) => {
  const { method } = c.req;
  if (method !== "GET" && app.router.match("GET", c.req.path)[0].length > 0) {
    if (method === "OPTIONS") return new Response(null, { status: 204, headers: PREFLIGHT_HEADERS });
    return problemAnswer(problem("method-not-allowed", { detail: `This address answers ${ALLOWED_METHODS} only.` }), {
      ...cacheHeaders("none"),
      allow: ALLOWED_METHODS,
    });
  }
  return problemAnswer(
    problem("route-not-found", { detail: "Nothing is served at this address." }),
    method === "GET" ? cacheHeaders("short") : cacheHeaders("none"),
  );
});

app.onError((error) => {
  console.error(JSON.stringify({ level: "error", event: "unhandled", message: String(error) }));
  return problemAnswer(
    problem("internal", { detail: "The resolver could not answer; try again." }),
    cacheHeaders("none"),
  );
});
