import { problem } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS, ifNoneMatch, problemAnswer } from "../http.ts";
import { lookUp, NOT_FOUND_DETAIL, UNAVAILABLE_DETAIL } from "../lookup.ts";

export const passports = new Hono<{ Bindings: Env }>();

const JSON_SUFFIX = ".json";

passports.get("/:file", async (c) => {
  const file = c.req.param("file");
  if (!file.endsWith(JSON_SUFFIX)) return c.notFound();
  const identityId = file.slice(0, -JSON_SUFFIX.length);
  const found = await lookUp(c.env.SNAPSHOTS, identityId);
  switch (found.kind) {
    case "malformed":
      return problemAnswer(problem("malformed-identity-id", { detail: found.detail }), cacheHeaders("stable"));
    case "unknown":
      return problemAnswer(
        problem("identity-not-found", { detail: NOT_FOUND_DETAIL }),
        cacheHeaders("identity", identityId),
      );
    case "unavailable":
      return problemAnswer(problem("unavailable", { detail: UNAVAILABLE_DETAIL }), {
        ...cacheHeaders("none"),
        "retry-after": "5",
      });
  }
  const { body, metadata } = found.snapshot;
  const headers: Record<string, string> = { ...CORS_HEADERS, ...cacheHeaders("identity", identityId) };
  if (metadata) {
    const etag = `"${metadata.digest}"`;
    headers.etag = etag;
    if (ifNoneMatch(c.req.header("if-none-match") ?? null, etag)) return new Response(null, { status: 304, headers });
  }
  headers["content-type"] = "application/json; charset=utf-8";
  return new Response(body, { headers });
});
