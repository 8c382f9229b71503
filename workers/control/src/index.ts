import { app } from "./app.ts";
import { recheckDueBindings } from "./bindings/recheck.ts";
import { database } from "./db/client.ts";
import { consumeAcquisitions } from "./marketplace/consumer.ts";
import { deleteExpiredAcquisitions } from "./marketplace/expiry.ts";
import { drainOutbox } from "./publication/publish.ts";

export { PublicationSequencer } from "./publication/sequencer.ts";

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(drainOutbox(env).then(() => undefined));
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
