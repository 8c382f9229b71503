import { app } from "./app.ts";
import { BINDING_CHECKS_QUEUE, consumeBindingChecks, enqueueDueChecks } from "./binding-checks/index.ts";
import { database } from "./db/client.ts";
import { consumeAcquisitions, deleteExpiredAcquisitions } from "./marketplace/index.ts";
import { drainOutbox, maintainLog } from "./publication/index.ts";

export { PublicationSequencer, TransparencyLog } from "./publication/index.ts";

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(drainOutbox(env).then(() => undefined));
    // Publications made before the log existed, then whatever tiles or checkpoint a failed pass
    // left out of KV (or a fresh signature on an idle log's checkpoint).
    ctx.waitUntil(maintainLog(env, database(env.DB)));
    // Hourly is soon enough for a one-day bound, and each run reads the acquisitions table.
    const at = new Date(controller.scheduledTime);
    if (at.getUTCMinutes() === 0) ctx.waitUntil(deleteExpiredAcquisitions(database(env.DB), at).then(() => undefined));
    // Every minute: what is due is claimed (organisations taking turns) and fanned out onto the
    // binding-checks queue, whose consumers check it (docs/scaling.md).
    ctx.waitUntil(enqueueDueChecks(env, at).then(() => undefined));
  },
  async queue(batch, env, _ctx) {
    if (batch.queue.startsWith(BINDING_CHECKS_QUEUE)) await consumeBindingChecks(batch, env);
    else await consumeAcquisitions(batch, env);
  },
} satisfies ExportedHandler<Env>;
