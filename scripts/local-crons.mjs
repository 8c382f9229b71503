// Cron triggers for the local service (docs/platform-model.md, Cron triggers): workerd never fires
// them, so `npm start` fires each Worker's scheduled handler through Miniflare at the times its
// wrangler config's `[triggers] crons` name, as the platform does.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import { cronsOf, startCronDriver } from "../workers/platform-model/src/cron.ts";

/**
 * Starts firing the crons of `workers` (each `{ name, config, env? }`, as startLocalWorkers takes
 * them) in the running `mf`. Returns the triggers it fires and `stop`.
 */
export function startLocalCrons({ root, mf, workers, onOutput }) {
  const triggers = workers.flatMap((worker) =>
    cronsOf(parse(readFileSync(join(root, worker.config), "utf8")), worker.env).map((cron) => ({
      worker: worker.name,
      cron,
    })),
  );
  const driver = startCronDriver(
    triggers,
    async ({ worker, cron }, scheduledTime) => {
      const result = await (await mf.getWorker(worker)).scheduled({ cron, scheduledTime: new Date(scheduledTime) });
      if (result.outcome !== "ok") throw new Error(`outcome ${result.outcome}`);
    },
    ({ worker, cron }, error) => onOutput?.(`cron "${cron}" of ${worker} failed: ${error.message ?? error}`),
  );
  return { triggers, stop: driver.stop };
}
