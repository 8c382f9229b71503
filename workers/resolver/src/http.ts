import { type Problem, problemResponse } from "@passport/domain";

/** Every route of the resolver answers these methods and no others. */
export const ALLOWED_METHODS = "GET, HEAD, OPTIONS";

/**
 * Open CORS for a public, credential-free surface: any origin may read any answer, including the
 * problem bodies, and may read the ETag it needs for a conditional re-check.
 */
export const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "ETag",
  "x-content-type-options": "nosniff",
};

/** The preflight answer for a browser that wants to send `If-None-Match` from script. */
export const PREFLIGHT_HEADERS: Record<string, string> = {
  ...CORS_HEADERS,
  allow: ALLOWED_METHODS,
  "access-control-allow-methods": ALLOWED_METHODS,
  "access-control-allow-headers": "If-None-Match",
  "access-control-max-age": "86400",
};

/** A problem+json answer carrying the resolver's CORS headers and the given cache headers. */
export function problemAnswer(body: Problem, headers: Record<string, string>): Response {
  return problemResponse(body, { ...CORS_HEADERS, ...headers });
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
