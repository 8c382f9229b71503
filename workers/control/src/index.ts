import { app } from "./app.ts";
import { recheckDueBindings } from "./binding-checks/index.ts";
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
    // Binding proofs last days and are re-checked two days before they end: every 15 minutes is ample.
    if (at.getUTCMinutes() % 15 === 0) ctx.waitUntil(recheckDueBindings(env, at).then(() => undefined));
  },
  async queue(batch, env, _ctx) {
    await consumeAcquisitions(batch, env);
  },
} satisfies ExportedHandler<Env>;
