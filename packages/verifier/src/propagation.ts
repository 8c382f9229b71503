/**
 * Publication in progress, as a consumer sees it (docs/freshness.md, docs/propagation-model.md):
 * the record, its history entries and the transparency log are separate keys that reach each
 * location on their own schedules, so for a while after a publication one piece of the service's
 * proof can be behind another. Within this window such a disagreement is `stale` (re-resolve); after
 * it, it is the conviction it always was (a rollback, a gap, a replay).
 */
import type { ReliedOn, StaleFinding, StaleItem } from "./outcome.ts";

/**
 * K (KV propagation, 60 s) + E (the edge cache, 60 s) + C (a client's copy, 15 s): the worst case of
 * docs/freshness.md for an answer to lag a publication.
 */
export const PROPAGATION_WINDOW_SECONDS = 135;

/** True when `publishedAt` (RFC 3339) is no longer ago than the propagation window, at `now` (ms). */
export function withinPropagation(publishedAt: string | undefined, now: number): boolean {
  if (!publishedAt) return false;
  const at = Date.parse(publishedAt);
  return Number.isFinite(at) && now - at <= PROPAGATION_WINDOW_SECONDS * 1000;
}

/** The `stale` finding for a disagreement that publication in progress explains. */
export function propagating(relied_on: ReliedOn, item: Omit<StaleItem, "what">, what: string): StaleFinding {
  return {
    outcome: "stale",
    next_step: "re-resolve",
    reason: `The service's proof is still propagating: ${what}. Nothing is established until it has caught up; re-resolve shortly (within ${PROPAGATION_WINDOW_SECONDS} s of a publication).`,
    relied_on,
    stale: [{ what: "propagation", ...item }],
  };
}
