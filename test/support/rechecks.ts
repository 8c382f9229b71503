import { env } from "cloudflare:workers";
import type { ClaimedCheck } from "../../workers/control/src/binding-checks/queries.ts";
import { claimDuePages, SCHEDULER } from "../../workers/control/src/binding-checks/recheck.ts";
import { runScheduledCheck, type ScheduledResult } from "../../workers/control/src/binding-checks/verify.ts";
import { database } from "../../workers/control/src/db/client.ts";
import { shardOfIdentity } from "./shards.ts";

// Scheduled re-checks run in the test, as the cron and the queue consumer would run them at `at`:
// the cron's claims, then each claimed check by the consumer's own function, in order.

type Limits = { pageSize: number; pages: number; perOrganisation: number };

/**
 * Claims what is due at `at` and runs each claimed check, `checkEnv(row)` choosing the environment a
 * check runs with (a broken one makes it throw). Returns each binding's outcome.
 */
export async function recheckAt(
  at: Date,
  options: { limits?: Limits; checkEnv?: (row: ClaimedCheck) => Env } = {},
): Promise<Map<string, ScheduledResult>> {
  const outcomes = new Map<string, ScheduledResult>();
  await claimDuePages(
    env,
    at,
    async (rows, claim) => {
      for (const row of rows) {
        const checkEnv = options.checkEnv?.(row) ?? env;
        outcomes.set(
          row.binding_id,
          await runScheduledCheck(checkEnv, database(await shardOfIdentity(row.passport_id)), { ...row, claim }, at),
        );
      }
    },
    options.limits ?? SCHEDULER,
  );
  return outcomes;
}
