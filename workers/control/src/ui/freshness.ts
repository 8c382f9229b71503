/** Evidence without a stated expiry older than this is shown as stale (docs/dashboard.md). */
const UNDATED_STALE_AFTER_DAYS = 90;

export type Freshness = "fresh" | "stale" | "expired";

/**
 * How the Dashboard labels one evidence reference: expired once `fresh_until` has passed; stale
 * when it states no expiry and was observed more than 90 days ago (re-check before relying on it);
 * fresh otherwise.
 * @example
 * evidenceFreshness({ observed_at: "2026-01-01T00:00:00Z", fresh_until: null }, Date.parse("2026-10-01")); // "stale"
 */
export function evidenceFreshness(
  evidence: { observed_at: string; fresh_until: string | null },
  now = Date.now(),
): Freshness {
  if (evidence.fresh_until) return Date.parse(evidence.fresh_until) > now ? "fresh" : "expired";
  const age = now - Date.parse(evidence.observed_at);
  return age > UNDATED_STALE_AFTER_DAYS * 86_400_000 ? "stale" : "fresh";
}
