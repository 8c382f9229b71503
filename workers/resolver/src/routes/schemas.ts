import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_ETAG_HEADERS, ifNoneMatch } from "../http.ts";
import passportRecordSchema from "../schemas/passport-record.schema.json";

export const schemas = new Hono<{ Bindings: Env }>();

/** FNV-1a over the text: a cheap, stable validator for a document that changes only with a deploy. */
function entityTag(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return `"fnv1a-${(hash >>> 0).toString(16)}-${text.length}"`;
}

const PASSPORT_RECORD_TEXT = JSON.stringify(passportRecordSchema);
const PASSPORT_RECORD_ETAG = entityTag(PASSPORT_RECORD_TEXT);

schemas.get("/passport-record.json", (c) => {
  const headers = { ...CORS_ETAG_HEADERS, ...cacheHeaders("short"), etag: PASSPORT_RECORD_ETAG };
  if (ifNoneMatch(c.req.header("if-none-match") ?? null, PASSPORT_RECORD_ETAG)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(PASSPORT_RECORD_TEXT, { headers: { ...headers, "content-type": "application/schema+json" } });
});
