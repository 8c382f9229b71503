import { readFileSync } from "node:fs";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { RETRY_DELAYS_SECONDS } from "../../workers/control/src/notifications/retries.ts";

// The notifications consumer retries a failed delivery after each delay of RETRY_DELAYS_SECONDS;
// the queue's max_retries decides when a delivery goes to the dead-letter queue instead (docs/events.md).

type Consumer = { queue: string; max_retries?: number; dead_letter_queue?: string };
type Config = { queues?: { consumers?: Consumer[] }; env?: Record<string, { queues?: { consumers?: Consumer[] } }> };

const config = parse(readFileSync("workers/control/wrangler.toml", "utf8")) as Config;

describe("the notifications queue's configuration", () => {
  for (const [where, consumers] of [
    ["production", config.queues?.consumers],
    ["development", config.env?.development?.queues?.consumers],
  ] as const) {
    it(`retries as often as the backoff schedule has delays, then dead-letters (${where})`, () => {
      const notifications = consumers?.find((c) => c.queue === "passport-notifications");
      expect(notifications?.max_retries).toBe(RETRY_DELAYS_SECONDS.length);
      expect(notifications?.dead_letter_queue).toBe("passport-notifications-dlq");
      expect(consumers?.some((c) => c.queue === "passport-notifications-dlq")).toBe(true);
    });
  }
});
