import { app } from "./app.ts";
import { consumeBindingChecks, enqueueDueChecks } from "./binding-checks/index.ts";
import { shardsOf } from "./db/shards.ts";
import { archiveHistory, archiveShardAt } from "./history/archive.ts";
import {
  consumeAcquisitions,
  consumeDeadLetteredAcquisitions,
  deleteExpiredAcquisitions,
} from "./marketplace/index.ts";
import {
  consumeDeadLetteredNotifications,
  consumeNotifications,
  forgetSettledDeliveries,
} from "./notifications/index.ts";
import { drainOutbox, maintainLog } from "./publication/index.ts";
import { type QueueRole, queueRole } from "./queues.ts";

export { PublicationSequencer, PurgeBudget, TransparencyLog } from "./publication/index.ts";

/** Each queue's consumer, by the queue's role: a new queue is a type error until it has one. */
const CONSUMERS: Record<QueueRole, (batch: MessageBatch<unknown>, env: Env) => Promise<void>> = {
  acquisitions: consumeAcquisitions,
  deadLetter: consumeDeadLetteredAcquisitions,
  bindingChecks: consumeBindingChecks,
  notifications: consumeNotifications,
  notificationsDeadLetter: consumeDeadLetteredNotifications,
};

export default {
  fetch: app.fetch,
  // Each shard's own work runs once per shard (db/shard-tasks.ts), a shard's failure never stopping
  // the others'; the service-wide tables (marketplace, notifications) are shard 0's
  // (docs/sharding.md, "Work outside the API").
  async scheduled(controller, env, ctx) {
    const shards = shardsOf(env);
    ctx.waitUntil(drainOutbox(env).then(() => undefined));
    // Publications made before the log existed, then whatever tiles or checkpoint a failed pass
    // left out of KV (or a fresh signature on an idle log's checkpoint).
    ctx.waitUntil(maintainLog(env));
    // Hourly is soon enough for a one-day bound, and each run reads the acquisitions table.
    const at = new Date(controller.scheduledTime);
    if (at.getUTCMinutes() === 0) ctx.waitUntil(deleteExpiredAcquisitions(shards.shard(0), at).then(() => undefined));
    // Every minute: what is due is claimed (organisations taking turns) and fanned out onto the
    // binding-checks queue, whose consumers check it (docs/scaling.md).
    ctx.waitUntil(enqueueDueChecks(env, at).then(() => undefined));
    // History older than the archive window leaves D1 for KV (docs/storage.md, "History archive"):
    // one shard a minute, in turn, because a run takes most of an invocation's D1 queries.
    ctx.waitUntil(archiveHistory(env, shards.shard(archiveShardAt(at, shards.count)), at).then(() => undefined));
    // Settled change notifications leave their attempts log after two weeks (docs/events.md).
    ctx.waitUntil(forgetSettledDeliveries(shards.shard(0), at));
  },
  // Routed by the queues' naming rule (queues.ts), so every environment's queues reach their own handler.
  async queue(batch, env, _ctx) {
    const role = queueRole(batch.queue);
    if (role) return CONSUMERS[role](batch, env);
    // A queue this Worker does not own was bound to it: never run its messages here. Retried, they
    // count against that queue's max_retries and then go to its dead-letter queue, if any.
    console.error(JSON.stringify({ level: "error", event: "queue_not_recognised", queue: batch.queue }));
    batch.retryAll();
  },
} satisfies ExportedHandler<Env>;
