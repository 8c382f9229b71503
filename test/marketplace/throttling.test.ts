import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../workers/control/src/index.ts";
import type { AcquisitionMessage } from "../../workers/control/src/marketplace/messages.ts";
import { queueNames } from "../../workers/control/src/queues.ts";
import { acquisitionState, freshAccountId, handoff, type RegistrationOptions, subscribe } from "./support.ts";

async function handed(options: RegistrationOptions = {}) {
  const registration = await subscribe({ customer_aws_account_id: freshAccountId(), ...options });
  return handoff(registration.registration_token);
}

async function deliverBatch(messages: AcquisitionMessage[], attempts: number) {
  const batch = createMessageBatch(
    queueNames(undefined).acquisitions,
    messages.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

async function stagesReached(acquisitionId: string): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT stage FROM acquisition_stages WHERE acquisition_id = ?")
    .bind(acquisitionId)
    .all<{ stage: string }>();
  return rows.results.map((r) => r.stage);
}

describe("a throttled marketplace", () => {
  it("backs the whole batch off: later messages do not call it, and all unsettled ones retry together", async () => {
    const first = await handed();
    const throttled = await handed({ scenario: "throttle", failures: 1 });
    const last = await handed();

    const result = await deliverBatch([first.message, throttled.message, last.message], 1);
    expect(result.explicitAcks).toEqual(["m0"]);
    expect(result.retryMessages).toEqual([]);
    // (The test harness does not report the batch's delay; the throttled stage shows it.)
    expect(result.retryBatch.retry).toBe(true);
    expect(await acquisitionState(first.acquisitionId)).toMatchObject({ status: "completed" });
    expect(await acquisitionState(throttled.acquisitionId)).toMatchObject({ status: "processing" });
    const stage = await env.DB.prepare(
      "SELECT error_code, error_message FROM acquisition_stages WHERE acquisition_id = ? AND stage = 'customer_identification'",
    )
      .bind(throttled.acquisitionId)
      .first<{ error_code: string; error_message: string }>();
    expect(stage?.error_code).toBe("ThrottlingException");
    expect(stage?.error_message).toMatch(/next one follows in 2 s\.$/);
    // The message after the throttled one never reached the marketplace.
    expect(await acquisitionState(last.acquisitionId)).toMatchObject({ status: "received" });
    expect(await stagesReached(last.acquisitionId)).toEqual(["registration_token_handoff"]);

    // The batch's redelivery completes both.
    const again = await deliverBatch([throttled.message, last.message], 2);
    expect(again.explicitAcks.sort()).toEqual(["m0", "m1"]);
    expect(again.retryBatch.retry).toBe(false);
    expect(await acquisitionState(throttled.acquisitionId)).toMatchObject({ status: "completed" });
    expect(await acquisitionState(last.acquisitionId)).toMatchObject({ status: "completed" });
  });
});
