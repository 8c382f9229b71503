import { database } from "../db/client.ts";
import { MarketplaceError, marketplaceClient } from "./adapter.ts";
import { customerOf, setUpAccountAndPassport } from "./claim-set-up.ts";
import { entitlementCheck, familyForProduct, type MarketplaceEnv, retryBaseSeconds, secret } from "./config.ts";
import { openToken } from "./crypto.ts";
import { AcquisitionMessage } from "./messages.ts";
import { customerKey, findAccount, upsertCustomer } from "./queries/accounts.ts";
import {
  failAcquisition,
  findAcquisition,
  recordedSubscription,
  recordProgress,
  resolvedAt,
  stagesOf,
} from "./queries/acquisitions.ts";
import { type Stage, visibleError } from "./stages.ts";

const MAX_DELAY_SECONDS = 300;
const ENDED_STATUSES = new Set(["ended", "deprovisioned", "unsubscribed", "failed"]);

/** A failure decided by us (not the marketplace), at the stage that was running. */
class StageFailure extends Error {
  constructor(
    readonly code: string,
    readonly retryable: boolean,
    message?: string,
  ) {
    super(message ?? code);
  }
}

/** `throttled`: the marketplace refused for its rate, so the whole batch waits (see consumeAcquisitions). */
type Outcome = { kind: "ack" } | { kind: "retry"; delaySeconds: number; throttled?: boolean };

function log(event: string, fields: Record<string, unknown>) {
  console.log(JSON.stringify({ level: "info", event, ...fields }));
}

/** Exponential backoff from ACQUISITION_RETRY_BASE_SECONDS, doubling per attempt, capped at five minutes. */
export function backoffSeconds(base: number, attempts: number): number {
  return Math.min(Math.round(base * 2 ** Math.max(0, attempts - 1)), MAX_DELAY_SECONDS);
}

/**
 * Walks one acquisition through its stages (spec 4.3 steps 4-8), recording each. Every write is
 * idempotent, so a redelivered or concurrently delivered message converges on the same account,
 * parent and passport; a stage that already succeeded (the token already resolved) is not redone.
 */
async function runAcquisition(env: MarketplaceEnv, message: AcquisitionMessage, attempts: number): Promise<Outcome> {
  const db = database(env.DB);
  const id = message.acquisition_id;
  const now = () => new Date().toISOString();
  const acquisition = await findAcquisition(db, id);
  if (!acquisition) {
    log("acquisition_unknown", { acquisition_id: id });
    return { kind: "ack" };
  }
  if (acquisition.status === "completed" || acquisition.status === "failed") return { kind: "ack" };

  let customer = customerOf(acquisition);
  // A stage that already succeeded (the customer resolved) is not redone.
  let stage: Stage = customer ? "activation" : "customer_identification";
  // When the marketplace last confirmed this customer: events older than that are overridden.
  let confirmedAt = customer ? await resolvedAt(db, acquisition) : "";
  // Each stage's writes are one batch: what it set on the acquisition, its own row, and the next
  // stage's row when that one starts at once.
  const running = (at: Stage) => ({ stage: at, update: { status: "running" as const, attempts, at: now() } });
  const succeeded = (at: Stage, outcome: string) => ({
    stage: at,
    update: { status: "succeeded" as const, outcome, attempts, at: now() },
  });
  try {
    await recordProgress(db, id, { patch: { status: "processing", updatedAt: now() }, stages: [running(stage)] });
    if (!customer) {
      let token: string;
      try {
        token = await openToken(secret(env, "MARKETPLACE_TOKEN_ENCRYPTION_KEY"), id, message.sealed_token);
      } catch {
        throw new StageFailure("TokenUnreadable", false);
      }
      confirmedAt = now();
      customer = await marketplaceClient(env).resolveCustomer(token);
      await recordProgress(db, id, {
        patch: {
          awsAccountId: customer.CustomerAWSAccountId ?? null,
          licenseArn: customer.LicenseArn ?? null,
          customerIdentifier: customer.CustomerIdentifier ?? null,
          productCode: customer.ProductCode,
          updatedAt: now(),
        },
        stages: [succeeded(stage, "customer resolved"), running("activation")],
      });
      stage = "activation";
    }

    if (entitlementCheck(env) === "get-entitlements") {
      confirmedAt = now();
      if (!(await marketplaceClient(env).hasEntitlement(customer))) throw new StageFailure("NotEntitled", false);
    }
    const recorded = await recordedSubscription(db, customerKey(customer));
    if (recorded && ENDED_STATUSES.has(recorded.status) && recorded.statusAt > confirmedAt) {
      throw new StageFailure("NotEntitled", false);
    }
    const entitled =
      entitlementCheck(env) === "get-entitlements" ? "entitled (GetEntitlements)" : "subscription active";
    await recordProgress(db, id, { stages: [succeeded(stage, entitled)] });

    stage = "product_mapping";
    const family = familyForProduct(env, customer.ProductCode);
    if (!family) {
      throw new StageFailure(
        "UnknownProductCode",
        false,
        `Product code ${customer.ProductCode} is not mapped to a passport family. ${visibleError("UnknownProductCode")}`,
      );
    }
    await recordProgress(db, id, {
      patch: { family, updatedAt: now() },
      stages: [succeeded(stage, `mapped to the ${family} family`)],
    });

    stage = "account";
    const marketplaceCustomerId = await upsertCustomer(db, customer, confirmedAt);
    if (!(await findAccount(db, customer))) {
      // A cloud account seen for the first time: the claimant chooses which organisation holds it
      // (one they already administer, or a new one), so nothing is created before the claim.
      await recordProgress(db, id, {
        patch: { marketplaceCustomerId, status: "completed", updatedAt: now() },
        stages: [],
      });
      log("acquisition_awaiting_claim", { acquisition_id: id });
      return { kind: "ack" };
    }
    // The account, passport and publication stages; the last of them completes the acquisition.
    const { accountOutcome, passportId } = await setUpAccountAndPassport(env, db, acquisition, {
      customer,
      marketplaceCustomerId,
      family,
      attempts,
      now,
    });
    log("acquisition_completed", { acquisition_id: id, account: accountOutcome, passport: passportId });
    return { kind: "ack" };
  } catch (error) {
    return handleFailure(env, id, stage, attempts, error);
  }
}

async function handleFailure(
  env: MarketplaceEnv,
  id: string,
  stage: Stage,
  attempts: number,
  error: unknown,
): Promise<Outcome> {
  const db = database(env.DB);
  const at = new Date().toISOString();
  let code = "InternalError";
  let retryable = true;
  let message = "A temporary problem on our side; set-up is retried automatically.";
  if (error instanceof MarketplaceError) {
    code = error.type;
    retryable = error.retryable;
    message = visibleError(code, `The marketplace answered ${code}.`);
  } else if (error instanceof StageFailure) {
    code = error.code;
    retryable = error.retryable;
    message = error.message === error.code ? visibleError(code) : error.message;
  } else {
    console.error(
      JSON.stringify({
        level: "error",
        event: "acquisition_stage_error",
        acquisition_id: id,
        stage,
        message: String(error),
      }),
    );
  }
  log("acquisition_stage_failed", { acquisition_id: id, stage, code, retryable, attempts });
  if (!retryable) {
    await failAcquisition(db, id, stage, { code, message, attempts, at });
    return { kind: "ack" };
  }
  const delaySeconds = backoffSeconds(retryBaseSeconds(env), attempts);
  await recordProgress(db, id, {
    stages: [
      {
        stage,
        update: {
          status: "retrying",
          errorCode: code,
          errorMessage: `${message} Attempt ${attempts} failed; the next one follows in ${delaySeconds} s.`,
          attempts,
          at,
        },
      },
    ],
  });
  return { kind: "retry", delaySeconds, throttled: code === "ThrottlingException" };
}

async function deadLetter(env: MarketplaceEnv, message: AcquisitionMessage): Promise<void> {
  const db = database(env.DB);
  const acquisition = await findAcquisition(db, message.acquisition_id);
  if (!acquisition || acquisition.status === "completed" || acquisition.status === "failed") return;
  const stages = await stagesOf(db, acquisition.id);
  const stuck = stages.findLast((s) => s.status !== "succeeded");
  const stage = (stuck?.stage as Stage | undefined) ?? "customer_identification";
  const last = stuck?.errorCode ? ` Last error: ${stuck.errorCode}.` : "";
  await failAcquisition(db, acquisition.id, stage, {
    code: "RetriesExhausted",
    message: `${visibleError("RetriesExhausted")}${last}`,
    attempts: stuck?.attempts,
    at: new Date().toISOString(),
  });
  log("acquisition_dead_lettered", { acquisition_id: acquisition.id, stage });
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
    await deadLetter(env, body);
    message.ack();
  }
}
