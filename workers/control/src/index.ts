import { app } from "./app.ts";
import { drainOutbox } from "./publish.ts";

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(drainOutbox(env).then(() => undefined));
  },
} satisfies ExportedHandler<Env>;
