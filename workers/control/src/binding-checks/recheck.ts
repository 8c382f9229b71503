import { database } from "../db/client.ts";
import { findPassport } from "../db/passports.ts";
import { dueBindings } from "./queries.ts";
import { runBindingCheck, SERVICE_SOURCE } from "./verify.ts";

/** A verified binding is re-checked once less than this is left of its proof. */
const RECHECK_WINDOW_MS = 2 * 24 * 3600 * 1000;

/**
 * Re-checks verified bindings whose proof ends within the re-check window (or has ended), oldest
 * first, on passports that are not retired. A success renews the proof; a failure lapses the
 * binding, records why in the history and republishes (runBindingCheck). Runs from the cron
 * trigger, never on the resolver's path; returns how many were renewed and lapsed.
 */
export async function recheckDueBindings(
  env: Env,
  now = new Date(),
  limit = 20,
): Promise<{ renewed: number; lapsed: number; failed: number }> {
  const db = database(env.DB);
  const due = await dueBindings(db, new Date(now.getTime() + RECHECK_WINDOW_MS).toISOString(), limit);
  const counts = { renewed: 0, lapsed: 0, failed: 0 };
  for (const { binding, passport } of due) {
    try {
      // Re-read: an earlier re-check in this run may have moved the passport's version on.
      const current = await findPassport(db, passport.id);
      if (!current) continue;
      const outcome = await runBindingCheck(env, db, current, binding, SERVICE_SOURCE);
      counts[outcome.result === "verified" ? "renewed" : "lapsed"]++;
    } catch (error) {
      // A concurrent change took the version; the binding is still due and is tried on the next run.
      counts.failed++;
      console.error(
        JSON.stringify({
          level: "error",
          event: "binding_recheck_failed",
          binding_id: binding.id,
          message: String(error),
        }),
      );
    }
  }
  if (due.length > 0) console.log(JSON.stringify({ level: "info", event: "bindings_rechecked", ...counts }));
  return counts;
}
