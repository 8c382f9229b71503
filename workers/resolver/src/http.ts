import { describeIdentityIdDefect, type IdentityIdDefect, type Problem, problem } from "@passport/domain";
import { cacheHeaders } from "./edge-cache.ts";

/** Every route of the resolver answers these methods and no others. */
export const ALLOWED_METHODS = "GET, HEAD, OPTIONS";

/**
 * The headers every answer carries. Open CORS for a public, credential-free surface: any origin may
 * read any answer, including the problem bodies. `nosniff`, so no browser reads a record, a problem
 * or a log tile as HTML or script whatever bytes a tenant put in it. Answers with an ETag also
 * expose it, for a conditional re-check from script.
 */
export const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "x-content-type-options": "nosniff",
};
export const CORS_ETAG_HEADERS: Record<string, string> = { ...CORS_HEADERS, "access-control-expose-headers": "ETag" };
/**
 * A record answer also exposes its detached signature (docs/signing.md) and its transparency-log
 * index (docs/transparency-log.md) to script.
 */
export const CORS_RECORD_HEADERS: Record<string, string> = {
  ...CORS_HEADERS,
  "access-control-expose-headers": "ETag, Passport-Signature, Passport-Log-Index",
};

/** The preflight answer for a browser that wants to send `If-None-Match` from script. */
export const PREFLIGHT_HEADERS: Record<string, string> = {
  ...CORS_ETAG_HEADERS,
  allow: ALLOWED_METHODS,
  "access-control-allow-methods": ALLOWED_METHODS,
  "access-control-allow-headers": "If-None-Match",
  "access-control-max-age": "86400",
};

const PROBLEM_CONTENT_TYPE = { "content-type": "application/problem+json" };

/**
 * Headers of a problem+json answer: CORS, the given cache headers and the content type. Built once
 * per kind of answer where possible; the resolver's problems carry no request-specific text.
 */
export function problemHeaders(cache: Record<string, string>): Record<string, string> {
  return { ...CORS_HEADERS, ...cache, ...PROBLEM_CONTENT_TYPE };
}

/** A problem+json answer (RFC 9457) with the resolver's CORS headers and the given cache headers. */
export function problemAnswer(body: Problem, cache: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status: body.status, headers: problemHeaders(cache) });
}

/** 400 for a string that can never be an identity id: the answer never changes, so it is cached as stable. */
export function malformedIdAnswer(defect: IdentityIdDefect): Response {
  return problemAnswer(
    problem("malformed-identity-id", { detail: describeIdentityIdDefect(defect) }),
    cacheHeaders("stable"),
  );
}

/**
 * Strong-or-weak comparison of an `If-None-Match` header with our entity tag (RFC 9110 13.1.2).
 * Weak comparison is right for GET, and Cloudflare may weaken the tags it forwards.
 * @example
 * ifNoneMatch('W/"sha-256:abc", "other"', '"sha-256:abc"'); // true
 */
export function ifNoneMatch(header: string | null, etag: string): boolean {
  if (header === null) return false;
  for (const candidate of header.split(",")) {
    const tag = candidate.trim();
    if (tag === "*" || tag === etag || (tag.startsWith("W/") && tag.slice(2) === etag)) return true;
  }
  return false;
}

/**
 * FNV-1a over a text: a cheap, stable entity tag for a document that changes only with a deploy or
 * a configuration change (not a content digest; nothing relies on it beyond revalidation).
 * @example
 * textEntityTag('{"keys":[]}'); // '"fnv1a-…-11"'
 */
export function textEntityTag(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return `"fnv1a-${(hash >>> 0).toString(16)}-${text.length}"`;
}
