import { identityCacheTag, isIdentityId } from "@passport/domain";

/**
 * How long answers may be reused. Workers Caching (`[cache] enabled` in wrangler.toml) reads
 * `Cloudflare-CDN-Cache-Control` first and strips it; browsers and other caches see only
 * `Cache-Control`. The bounds these numbers give are worked out in docs/freshness.md.
 */
const EDGE_TTL_SECONDS = 60;
const CLIENT_TTL_SECONDS = 15;
/** For answers that cannot change while the id format stands, such as a malformed id. */
const STABLE_TTL_SECONDS = 3600;

export type CachePolicy = "identity" | "stable" | "short" | "none";

// stale-if-error=0: by default the edge would keep serving a purged-by-time answer indefinitely
// while the Worker fails, which would let a revoked passport look active for as long as KV is down.
const POLICIES: Record<CachePolicy, Record<string, string>> = {
  identity: {
    "cache-control": `public, max-age=${CLIENT_TTL_SECONDS}`,
    "cloudflare-cdn-cache-control": `public, max-age=${EDGE_TTL_SECONDS}, stale-if-error=0`,
  },
  stable: { "cache-control": `public, max-age=${STABLE_TTL_SECONDS}` },
  short: {
    "cache-control": `public, max-age=${CLIENT_TTL_SECONDS}`,
    "cloudflare-cdn-cache-control": `public, max-age=${EDGE_TTL_SECONDS}`,
  },
  none: { "cache-control": "no-store" },
};

/**
 * Cache headers for one kind of answer, plus the per-identity `Cache-Tag` that lets a purge drop
 * every cached answer about that identity (record, page and a cached 404 alike).
 * @example
 * cacheHeaders("identity", "psp_k03khmq2ren546nj2zrpdtsmdz")["cache-tag"]; // "passport-psp_k03k…"
 */
export function cacheHeaders(policy: CachePolicy, identityId?: string): Record<string, string> {
  const headers = POLICIES[policy];
  return identityId ? { ...headers, "cache-tag": identityCacheTag(identityId) } : headers;
}

/**
 * Drops every answer the edge cached for one identity, in every location. `cache` is the default
 * entry point's `ctx.cache`: Workers Caching scopes a purge to the entry point that calls it, so
 * the call must come from the entry point that served the answers. It is absent where the runtime
 * has no Workers Caching (local workerd), and then nothing was cached. A refused purge (for
 * example rate-limited) throws, so the publisher keeps its outbox row and tries again.
 * @example
 * await purgeIdentity(this.ctx.cache, "psp_k03khmq2ren546nj2zrpdtsmdz");
 */
export async function purgeIdentity(cache: CacheContext | undefined, identityId: string): Promise<void> {
  if (!isIdentityId(identityId)) throw new TypeError("purge needs a well-formed identity id");
  if (typeof cache?.purge !== "function") return;
  const result = await cache.purge({ tags: [identityCacheTag(identityId)] });
  if (!result.success) {
    const reasons = result.errors.map((error) => `${error.code}: ${error.message}`).join("; ");
    throw new Error(`edge cache purge for ${identityId} was refused (${reasons || "no reason given"})`);
  }
}
