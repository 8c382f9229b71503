import { app } from "./app.ts";
import { consumeAcquisitions } from "./marketplace/consumer.ts";
import { drainOutbox } from "./publication/publish.ts";

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(drainOutbox(env).then(() => undefined));
  },
  async queue(batch, env, _ctx) {
    await consumeAcquisitions(batch, env);
  },
} satisfies ExportedHandler<Env>;
