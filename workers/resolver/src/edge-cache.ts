import { identityCacheTag, isIdentityId } from "@passport/domain";

/**
 * How long answers may be reused. Workers Caching (`[cache] enabled` in wrangler.toml) reads
 * `Cloudflare-CDN-Cache-Control` first and strips it; browsers and other caches see only
 * `Cache-Control`. The bounds these numbers give are worked out in docs/freshness.md.
 *
 * An identity's answers live at the edge for `E` = 30 s: purges are a budget of a few calls a
 * minute for the whole service, so when it is short the edge lifetime alone bounds how long a
 * changed record can be served, and 30 s keeps a revocation within the 30 s the service states even
 * with no purge at all (where KV is consistent).
 */
const IDENTITY_EDGE_TTL_SECONDS = 30;
/** Answers that change only with a deploy (schemas, pages): no purge ever drops them. */
const EDGE_TTL_SECONDS = 60;
const CLIENT_TTL_SECONDS = 15;
/** For answers that cannot change while the id format stands, such as a malformed id. */
const STABLE_TTL_SECONDS = 3600;
/**
 * A full page of signed history entries with contiguous versions never changes (entries are
 * immutable and a page with `next` is complete), so the edge keeps it for a day.
 */
const SETTLED_EDGE_TTL_SECONDS = 86_400;

export type CachePolicy = "identity" | "settled" | "stable" | "short" | "none";

// stale-if-error=0: by default the edge would keep serving a purged-by-time answer indefinitely
// while the Worker fails, which would let a revoked passport look active for as long as KV is down.
const POLICIES: Record<CachePolicy, Record<string, string>> = {
  identity: {
    "cache-control": `public, max-age=${CLIENT_TTL_SECONDS}`,
    "cloudflare-cdn-cache-control": `public, max-age=${IDENTITY_EDGE_TTL_SECONDS}, stale-if-error=0`,
  },
  settled: {
    "cache-control": `public, max-age=${STABLE_TTL_SECONDS}`,
    "cloudflare-cdn-cache-control": `public, max-age=${SETTLED_EDGE_TTL_SECONDS}`,
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

/** At most this many tags in one purge call: Workers Caching's limit (docs/freshness.md). */
const MAX_TAGS_PER_PURGE = 100;

/**
 * Drops every answer the edge cached for the given identities, in every location, in one purge
 * call (one token of the purge budget, at most 100 identities). `cache` is the default entry
 * point's `ctx.cache`: Workers Caching scopes a purge to the entry point that calls it, so the
 * call must come from the entry point that served the answers. Where the runtime has no Workers
 * Caching (local workerd) it is the platform model's edge when the local configuration binds one,
 * else absent, and then nothing was cached. A refused purge (for example rate-limited) throws; the
 * control plane's purge keeper keeps the identities and tries again later.
 * @example
 * await purgeIdentities(this.ctx.cache, ["psp_k03khmq2ren546nj2zrpdtsmdz"]);
 */
export async function purgeIdentities(
  cache: Pick<CacheContext, "purge"> | undefined,
  identityIds: readonly string[],
): Promise<void> {
  if (identityIds.length === 0 || !identityIds.every(isIdentityId)) {
    throw new TypeError("purge needs well-formed identity ids");
  }
  if (identityIds.length > MAX_TAGS_PER_PURGE) {
    throw new RangeError(`a purge names at most ${MAX_TAGS_PER_PURGE} identities`);
  }
  if (typeof cache?.purge !== "function") return;
  const result = await cache.purge({ tags: identityIds.map(identityCacheTag) });
  if (!result.success) {
    const reasons = result.errors.map((error) => `${error.code}: ${error.message}`).join("; ");
    const which = identityIds.length === 1 ? identityIds[0] : `${identityIds.length} identities`;
    throw new Error(`edge cache purge for ${which} was refused (${reasons || "no reason given"})`);
  }
}
