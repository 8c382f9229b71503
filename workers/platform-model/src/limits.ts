/**
 * The deployed platform's limits that the local runtime (workerd, Miniflare) does not enforce.
 * Every model in this folder takes its defaults from here, so a figure is written once; the
 * sources are listed in docs/platform-model.md.
 */
export const PLATFORM_LIMITS = {
  /** Workers Caching's `ctx.cache.purge`: always the Free-tier purge limits, whatever the plan. */
  purge: { callsPerMinute: 5, bucket: 25, tagsPerCall: 100 },
  /** Workers KV: one write a second to one key; a write shows elsewhere within 60 s. */
  kv: { writeIntervalPerKeyMs: 1000, propagationMs: 60_000 },
  /** D1: one query at a time per database; 10 GB per database, which cannot be raised. */
  d1: { maxDatabaseBytes: 10 * 1024 ** 3 },
  /** Durable Objects: one request at a time per object; a soft limit near 1,000 requests a second. */
  durableObjects: { softLimitPerSecond: 1000 },
} as const;
