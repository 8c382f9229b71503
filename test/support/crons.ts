import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import control from "../../workers/control/src/index.ts";
import { fireTimesBetween } from "../../workers/platform-model/src/cron.ts";

/** The control plane's cron expressions, as its wrangler.toml gives them (vitest.config.ts). */
export const CONTROL_CRONS: string[] = JSON.parse(env.TEST_CONTROL_CRONS);

/**
 * Runs the control plane's scheduled handler for `cron` as the platform would at `scheduledTime`
 * (docs/platform-model.md, Cron triggers), and waits for all it started (`waitUntil` included).
 */
async function runCron(cron: string, scheduledTime: number): Promise<void> {
  const ctx = createExecutionContext();
  await control.scheduled(createScheduledController({ cron, scheduledTime }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/**
 * Stands for the simulated time (`from`, `to`]: every firing of the control plane's crons in it,
 * in order of their times. Returns the times it ran.
 */
export async function runCronsBetween(from: number, to: number): Promise<number[]> {
  const firings = CONTROL_CRONS.flatMap((cron) => fireTimesBetween(cron, from, to).map((at) => ({ cron, at })));
  firings.sort((a, b) => a.at - b.at);
  for (const { cron, at } of firings) await runCron(cron, at);
  return firings.map((firing) => firing.at);
}
