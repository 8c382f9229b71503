import { z } from "zod";
import { type Database, randomId } from "../db/client.ts";
import { onEveryShard } from "../db/shard-tasks.ts";
import { shardsOf } from "../db/shards.ts";
import { type ClaimedCheck, claimDueChecks } from "./queries.ts";
import { settleFinishedReevaluations } from "./reevaluation.ts";
import { CLAIM_LEASE_MS } from "./schedule.ts";
import { runScheduledCheck, type ScheduledCheck, type ScheduledResult } from "./verify.ts";

// Scheduled re-checks (docs/bindings.md, "Re-checks"; capacity in docs/scaling.md). The cron
// claims the bindings that are due in every shard, organisations taking turns, and fans them out
// onto the binding-checks queue; the queue's consumers check them, many at once, and write each
// outcome under its claim, in the shard of the passport checked.

/** How much one scheduler run may claim in each shard: pages of PAGE_SIZE, at most PAGES of them, so 10,000 a minute. */
export const SCHEDULER = {
  pageSize: 500,
  pages: 20,
  /** One organisation's share of a page: the rest of the page is left to the others' turns. */
  perOrganisation: 100,
} as const;

/** `sendBatch` takes at most 100 messages. */
const SEND_BATCH = 100;

const ScheduledCheckMessage = z.object({ binding_id: z.string(), passport_id: z.string(), claim: z.string() });

function log(event: string, fields: Record<string, unknown>) {
  console.log(JSON.stringify({ level: "info", event, ...fields }));
}

type Limits = { pageSize: number; pages: number; perOrganisation: number };

/**
 * Claims every binding due by `now` in every shard at once, each shard page by page (each page one
 * statement, organisations taking turns, at most `limits` a shard), and hands each page to
 * `dispatch`. Returns how many were claimed. A page that is not dispatched (the queue refused it)
 * is claimed again once its lease runs out; a shard that fails is logged and the others go on.
 */
export async function claimDuePages(
  env: Env,
  now: Date,
  dispatch: (claimed: ClaimedCheck[], claim: string) => Promise<void>,
  limits: Limits = SCHEDULER,
): Promise<number> {
  const claimed = await onEveryShard(shardsOf(env), "binding_checks_claim_failed", (db) =>
    claimShardPages(db, now, dispatch, limits),
  );
  return claimed.reduce<number>((sum, count) => sum + (count ?? 0), 0);
}

async function claimShardPages(
  db: Database,
  now: Date,
  dispatch: (claimed: ClaimedCheck[], claim: string) => Promise<void>,
  limits: Limits,
): Promise<number> {
  const at = now.toISOString();
  let claimed = 0;
  for (let page = 0; page < limits.pages; page++) {
    const claim = randomId("chk");
    const rows = await claimDueChecks(db, {
      now: at,
      leaseUntil: new Date(now.getTime() + CLAIM_LEASE_MS).toISOString(),
      claim,
      perOrganisation: limits.perOrganisation,
      limit: limits.pageSize,
    });
    if (rows.length === 0) break;
    claimed += rows.length;
    await dispatch(rows, claim);
    if (rows.length < limits.pageSize) break;
  }
  return claimed;
}

/** The cron's part: claims what is due and sends it to the binding-checks queue. */
export async function enqueueDueChecks(env: Env, now = new Date()): Promise<number> {
  const claimed = await claimDuePages(env, now, async (rows, claim) => {
    for (let i = 0; i < rows.length; i += SEND_BATCH) {
      const messages = rows.slice(i, i + SEND_BATCH).map((row) => ({
        body: { binding_id: row.binding_id, passport_id: row.passport_id, claim } satisfies ScheduledCheck,
      }));
      await env.BINDING_CHECKS.sendBatch(messages);
    }
  });
  if (claimed > 0) log("binding_checks_enqueued", { claimed });
  // Re-evaluations that no check will end (docs/lifecycle.md#re-evaluation), in every shard.
  const settledByShard = await onEveryShard(shardsOf(env), "reevaluations_settle_failed", (db) =>
    settleFinishedReevaluations(env, db, now),
  );
  const settled = settledByShard.reduce<number>((sum, count) => sum + (count ?? 0), 0);
  if (settled > 0) log("reevaluations_settled", { settled });
  return claimed;
}

/**
 * The queue consumer: checks of different passports run at once; those of one passport run one
 * after another (each is a new record version), in the passport's shard. A check that fails is
 * recorded and rescheduled by runScheduledCheck; only a failure to record anything (D1
 * unavailable, or the passport's organisation fenced for a move) retries the message.
 */
export async function consumeBindingChecks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const shards = shardsOf(env);
  const byPassport = new Map<string, { message: Message<unknown>; check: ScheduledCheck }[]>();
  for (const message of batch.messages) {
    const parsed = ScheduledCheckMessage.safeParse(message.body);
    if (!parsed.success) {
      log("binding_check_message_malformed", { id: message.id });
      message.ack();
      continue;
    }
    const group = byPassport.get(parsed.data.passport_id) ?? [];
    group.push({ message, check: parsed.data });
    byPassport.set(parsed.data.passport_id, group);
  }
  const counts: Partial<Record<ScheduledResult | "unrecorded", number>> = {};
  await Promise.all(
    [...byPassport.values()].map(async (group) => {
      for (const { message, check } of group) {
        try {
          const db = await shards.forIdentity(check.passport_id);
          const result = await runScheduledCheck(env, db, check);
          counts[result] = (counts[result] ?? 0) + 1;
          message.ack();
        } catch (error) {
          counts.unrecorded = (counts.unrecorded ?? 0) + 1;
          console.error(
            JSON.stringify({
              level: "error",
              event: "binding_check_unrecorded",
              binding_id: check.binding_id,
              message: String(error),
            }),
          );
          message.retry({ delaySeconds: 60 * message.attempts });
        }
      }
    }),
  );
  log("bindings_rechecked", counts);
}
