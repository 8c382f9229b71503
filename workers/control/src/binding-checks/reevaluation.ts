import type { Database } from "../db/client.ts";
import { findPassport } from "../db/passports.ts";
import { publishOrDefer } from "../publication/index.ts";
import { clearRecheckIfPassed, pendingReevaluation, reevaluationsToSettle, schedulePendingChecks } from "./queries.ts";

// Re-evaluation after reactivation (docs/lifecycle.md#re-evaluation). Reactivating a passport sets
// `recheck_required` and makes every binding the service checked before due (changes/, in the
// reactivation's own batch); the scheduler and the binding-checks queue run those checks. The flag
// clears here, as the passport's next record version by the service, once nothing is pending: each
// binding that held proof passed a check since, and each claim that had evidence has fresh
// evidence since. An unreachable host leaves its binding pending, neither passed nor failed.

/** The actor of the change that clears the flag: the service's own checks. */
const SERVICE_ACTOR = "passport-service";
/** How many finished re-evaluations one scheduler run settles. */
const SETTLE_PER_RUN = 50;

/** What a flagged passport's re-evaluation waits for; undefined when it awaits none. */
export async function reevaluationOf(db: Database, passport: { id: string; recheckSince: string | null }, now: Date) {
  if (!passport.recheckSince) return undefined;
  const pending = await pendingReevaluation(db, passport.id, passport.recheckSince, now.toISOString());
  return { since: passport.recheckSince, ...pending };
}

/**
 * Clears the passport's re-check flag if its re-evaluation waits for nothing more (one conditional
 * batch, never a read deciding a write) and republishes it. A change racing it wins: the batch
 * then writes nothing (its statements are conditioned on the version read) and the next check or
 * scheduler run tries again. Returns whether the flag was cleared.
 */
export async function settleReevaluation(env: Env, db: Database, passportId: string, now = new Date()) {
  const passport = await findPassport(db, passportId);
  if (!passport?.recheckSince) return false;
  const cleared = await clearRecheckIfPassed(
    db,
    { id: passport.id, version: passport.recordVersion, since: passport.recheckSince },
    {
      actor: SERVICE_ACTOR,
      at: now.toISOString(),
      detail: { recheck_passed: true, recheck_since: passport.recheckSince },
    },
  );
  if (cleared) await publishOrDefer(env, passport.id);
  return cleared;
}

/**
 * The scheduler's part: re-evaluations that finished without a check to end them (a passport with
 * no proven binding, or whose last pending claim got fresh evidence from a member) are settled on
 * the next run. Returns how many flags it cleared.
 */
export async function settleFinishedReevaluations(env: Env, db: Database, now = new Date()): Promise<number> {
  const rows = await reevaluationsToSettle(db, now.toISOString(), SETTLE_PER_RUN);
  let cleared = 0;
  for (const row of rows) if (await settleReevaluation(env, db, row.id, now)) cleared++;
  return cleared;
}

/** A member's "re-check now": the pending bindings are due at once (the next scheduler run). */
export async function requestReevaluationChecks(db: Database, passport: { id: string; recheckSince: string | null }) {
  if (!passport.recheckSince) return 0;
  return schedulePendingChecks(db, passport.id, passport.recheckSince, new Date().toISOString());
}
