import { type MarketplaceEnv, retryBaseSeconds } from "./config.ts";
import { AcquisitionMessage } from "./messages.ts";
import { backoffSeconds, failExhausted, type Outcome, runAcquisition } from "./stage-runner.ts";

function log(event: string, fields: Record<string, unknown>) {
  console.log(JSON.stringify({ level: "info", event, ...fields }));
}

/** The batch's acquisition messages; one that is not one is logged and acknowledged (it can never run). */
function* acquisitionMessages(batch: MessageBatch<unknown>): Generator<[Message<unknown>, AcquisitionMessage]> {
  for (const message of batch.messages) {
    const parsed = AcquisitionMessage.safeParse(message.body);
    if (parsed.success) {
      yield [message, parsed.data];
      continue;
    }
    log("acquisition_message_malformed", { queue: batch.queue, id: message.id });
    message.ack();
  }
}

/**
 * The acquisition queue's handler: walks each acquisition's stages. Messages run one after
 * another: once the marketplace answers ThrottlingException, the rest of the batch does not call
 * it, and every message not yet settled is retried together after the throttled one's backoff.
 * @example
 * export default { fetch: app.fetch, queue: consumeAcquisitions } satisfies ExportedHandler<Env>;
 */
export async function consumeAcquisitions(batch: MessageBatch<unknown>, env: MarketplaceEnv): Promise<void> {
  for (const [message, body] of acquisitionMessages(batch)) {
    let outcome: Outcome;
    try {
      outcome = await runAcquisition(env, body, message.attempts);
    } catch (error) {
      // Even recording the failure failed (D1 unavailable): let the queue try again later.
      console.error(JSON.stringify({ level: "error", event: "acquisition_unrecorded", message: String(error) }));
      outcome = { kind: "retry", delaySeconds: backoffSeconds(retryBaseSeconds(env), message.attempts) };
    }
    if (outcome.kind === "retry" && outcome.throttled) {
      // Messages already acked or retried keep their own outcome; retryAll covers the rest.
      log("acquisition_batch_throttled", { queue: batch.queue, delay_seconds: outcome.delaySeconds });
      batch.retryAll({ delaySeconds: outcome.delaySeconds });
      return;
    }
    if (outcome.kind === "retry") message.retry({ delaySeconds: outcome.delaySeconds });
    else message.ack();
  }
}

/**
 * The acquisition dead-letter queue's handler: marks what exhausted its retries as failed,
 * visibly, at the stage where it stopped. It never runs a stage again. A failure to record it
 * (D1 unavailable) is thrown, so the platform delivers the batch again.
 */
export async function consumeDeadLetteredAcquisitions(
  batch: MessageBatch<unknown>,
  env: MarketplaceEnv,
): Promise<void> {
  for (const [message, body] of acquisitionMessages(batch)) {
    await failExhausted(env, body);
    message.ack();
  }
}
