/**
 * Seconds before each retry of a failed delivery: quick at first (a receiver restarting), then
 * spread over nearly three hours, every delay under a queue's 12-hour bound. The queue's
 * max_retries (workers/control/wrangler.toml) is this schedule's length
 * (test/tooling/notifications-queue.test.ts); after the last retry the message goes to the
 * dead-letter queue.
 */
export const RETRY_DELAYS_SECONDS = [5, 30, 120, 600, 1800, 7200] as const;

/** The delay before the retry that follows attempt number `attempts` (1 for the first). */
export function retryDelay(attempts: number): number {
  return RETRY_DELAYS_SECONDS[Math.min(attempts, RETRY_DELAYS_SECONDS.length) - 1] ?? RETRY_DELAYS_SECONDS[0];
}
