import type { Database } from "../db/client.ts";
import { pendingPublication } from "../db/passports.ts";
import { shardsOf } from "../db/shards.ts";
import { publishOrDefer } from "../publication/index.ts";
import { MarketplaceError, marketplaceClient, type ResolvedCustomer } from "./adapter.ts";
import { CHARGED_OFFER } from "./checklist.ts";
import { entitlementCheck, familyForProduct, type MarketplaceEnv, retryBaseSeconds, secret } from "./config.ts";
import { openToken } from "./crypto.ts";
import type { AcquisitionMessage } from "./messages.ts";
import {
  type AccountOutcome,
  type EnsuredPassport,
  type ExistingOrganisation,
  ensureAccount,
  ensurePassport,
  findAccount,
  type MarketplaceAccount,
  recordedSubscription,
  upsertCustomer,
} from "./queries/accounts.ts";
import {
  type AcquisitionRow,
  acquisitionToRun,
  findAcquisition,
  type Progress,
  recordProgress,
  type StageUpdate,
  stagesOf,
} from "./queries/acquisitions.ts";
import { STAGES, type Stage, visibleError } from "./stages.ts";

// One acquisition's set-up stages (spec 4.3 steps 4-8), in order, and their records. Each stage's
// rule does its work and returns what to record; `StageRun.settle` records it, with the stage's
// success, as one D1 batch. The queue consumer runs every stage; the claim runs the account,
// passport and publication stages of a cloud account seen for the first time.

const MAX_DELAY_SECONDS = 300;
const ENDED_STATUSES = new Set(["ended", "deprovisioned", "unsubscribed", "failed"]);
/** Stages that wait on the marketplace: they are shown running while they do. */
const WAITS_ON_MARKETPLACE: ReadonlySet<Stage> = new Set(["customer_identification", "activation"]);

const ACCOUNT_OUTCOMES: Record<AccountOutcome, string> = {
  created: "account and parent organisation created",
  linked: "linked to your existing organisation",
  reused: "existing account reused",
};

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
export type Outcome = { kind: "ack" } | { kind: "retry"; delaySeconds: number; throttled?: boolean };

function log(event: string, fields: Record<string, unknown>) {
  console.log(JSON.stringify({ level: "info", event, ...fields }));
}

/** Exponential backoff from ACQUISITION_RETRY_BASE_SECONDS, doubling per attempt, capped at five minutes. */
export function backoffSeconds(base: number, attempts: number): number {
  return Math.min(Math.round(base * 2 ** Math.max(0, attempts - 1)), MAX_DELAY_SECONDS);
}

/** What a stage's rule did: the stage's outcome, what it sets on the acquisition, and what later stages need. */
type Settled<T> = Omit<Progress, "stages"> & { outcome: string; value: T };

/** One run of an acquisition's stages; it knows the stage running now, where a failure is recorded. */
class StageRun {
  constructor(
    readonly db: Database,
    readonly id: string,
    readonly attempts: number,
    public stage: Stage,
  ) {}

  now() {
    return new Date().toISOString();
  }

  /** Records progress in one D1 batch: the one place the stages' records are written. */
  record(progress: Progress) {
    return recordProgress(this.db, this.id, progress);
  }

  update(status: StageUpdate["status"], fields: Omit<StageUpdate, "status" | "attempts" | "at"> = {}) {
    return { status, ...fields, attempts: this.attempts, at: this.now() };
  }

  /**
   * Runs one stage's rule and records what it returns with the stage's success; the next stage
   * starts in the same batch when it waits on the marketplace, so it shows as running meanwhile.
   */
  async settle<T>(stage: Stage, rule: () => Promise<Settled<T>>): Promise<T> {
    this.stage = stage;
    const { outcome, value, ...record } = await rule();
    const next = STAGES[STAGES.indexOf(stage) + 1];
    const stages: Progress["stages"] = [{ stage, update: this.update("succeeded", { outcome }) }];
    if (next && WAITS_ON_MARKETPLACE.has(next)) stages.push({ stage: next, update: this.update("running") });
    await this.record({ ...record, stages });
    return value;
  }

  /** Marks the acquisition failed at the stage that was running, unless it already completed or failed. */
  fail(failure: { code: string; message: string }) {
    const update = this.update("failed", { errorCode: failure.code, errorMessage: failure.message });
    return this.record({
      stages: [{ stage: this.stage, update }],
      patch: {
        status: "failed",
        failedStage: this.stage,
        errorCode: failure.code,
        errorMessage: failure.message,
        updatedAt: update.at,
      },
    });
  }
}

/** The resolved customer an acquisition recorded, once customer identification succeeded. */
function customerOf(row: AcquisitionRow): ResolvedCustomer | undefined {
  if (!row.productCode || !(row.awsAccountId || row.customerIdentifier)) return undefined;
  return {
    CustomerAWSAccountId: row.awsAccountId ?? undefined,
    CustomerIdentifier: row.customerIdentifier ?? undefined,
    LicenseArn: row.licenseArn ?? undefined,
    ProductCode: row.productCode,
  };
}

/**
 * Customer identification: the sealed token opened and resolved by the marketplace, and when it
 * was asked (the customer's first confirmation).
 */
async function identifyCustomer(env: MarketplaceEnv, message: AcquisitionMessage) {
  let token: string;
  try {
    token = await openToken(
      secret(env, "MARKETPLACE_TOKEN_ENCRYPTION_KEY"),
      message.acquisition_id,
      message.sealed_token,
    );
  } catch {
    throw new StageFailure("TokenUnreadable", false);
  }
  const confirmedAt = new Date().toISOString();
  return { customer: await marketplaceClient(env).resolveCustomer(token), confirmedAt };
}

/**
 * Spec 1.5 and 4.3 step 1: the API passport is acquired at zero software charge. The listing is
 * free; the one charge signal a handoff carries is its offer type, which the marketplace sends only
 * for a free trial (of a priced offer) and omits otherwise (docs/acquisition.md, "Zero charge").
 * Any offer type is therefore not the zero-charge listing, and activation refuses it.
 */
function checkZeroCharge(offerType: string | null): string {
  if (offerType === null) return "zero software charge";
  throw new StageFailure(
    CHARGED_OFFER,
    false,
    `The subscription came through a "${offerType}" offer, not the API passport's zero-charge listing. ${visibleError(CHARGED_OFFER)}`,
  );
}

/**
 * Activation: the offer's zero charge and the entitlement check, then the recorded events weighed
 * against `confirmedAt` (when the marketplace last confirmed the customer). Returns the
 * confirmation time it leaves.
 */
async function activate(
  env: MarketplaceEnv,
  db: Database,
  customer: ResolvedCustomer,
  confirmedAt: string,
  offerType: string | null,
) {
  const charge = checkZeroCharge(offerType);
  const checked = entitlementCheck(env) === "get-entitlements";
  if (checked) {
    confirmedAt = new Date().toISOString();
    if (!(await marketplaceClient(env).hasEntitlement(customer))) throw new StageFailure("NotEntitled", false);
  }
  const recorded = await recordedSubscription(db, customer);
  if (recorded && ENDED_STATUSES.has(recorded.status) && recorded.statusAt > confirmedAt) {
    throw new StageFailure("NotEntitled", false);
  }
  return { confirmedAt, outcome: `${checked ? "entitled (GetEntitlements)" : "subscription active"}; ${charge}` };
}

function productFamily(env: MarketplaceEnv, productCode: string): "api" | "agent" {
  const family = familyForProduct(env, productCode);
  if (family) return family;
  throw new StageFailure(
    "UnknownProductCode",
    false,
    `Product code ${productCode} is not mapped to a passport family. ${visibleError("UnknownProductCode")}`,
  );
}

/**
 * The passport stage's outcome as the customer reads it: an adopted suspended passport says it
 * stays suspended until its reactivation re-evaluates it (spec 3); a new one names what it follows.
 */
function passportOutcome(ensured: EnsuredPassport): string {
  if (ensured.outcome === "reused") {
    return ensured.suspended
      ? "existing passport reused; it stays suspended until you reactivate it, which re-evaluates its bindings and evidence"
      : "existing passport reused";
  }
  return ensured.follows
    ? `new API passport issued; it follows ${ensured.follows.identityId} (${ensured.follows.lifecycle}), which is never reused`
    : "new API passport issued";
}

/** What the account, passport and publication stages start from. */
interface SetUp {
  customer: ResolvedCustomer;
  marketplaceCustomerId: string;
  family: "api" | "agent";
  existing?: ExistingOrganisation;
  /** The organisation's passport the claimant chose to adopt; omitted: the oldest active one. */
  chosenPassport?: string;
}

/**
 * The account, passport and publication stages (spec 4.3 steps 6, 8): the cloud account's account
 * reused, else linked to `existing` or created; its passport of the family reused, adopted from the
 * organisation (the one the claimant chose, else the oldest active one), else issued; then
 * published. The last completes an acquisition still in progress (the queue consumer's); one claimed
 * after it completed is left as it is. Every write is idempotent or guarded by a unique key, so a
 * retried or concurrent run converges on one account, parent and passport.
 */
async function setUpAccountAndPassport(env: MarketplaceEnv, run: StageRun, input: SetUp) {
  const { db } = run;
  const shards = shardsOf(env);
  const { account, outcome } = await run.settle("account", async () => {
    const ensured = await ensureAccount(shards, input.customer, input.marketplaceCustomerId, input.existing);
    return {
      outcome: ACCOUNT_OUTCOMES[ensured.outcome],
      account: {
        marketplaceCustomerId: input.marketplaceCustomerId,
        marketplaceAccountId: ensured.account.id,
        outcome: ensured.outcome,
        firstTime: ensured.outcome === "reused" ? "" : ensured.outcome,
        at: run.now(),
      },
      value: ensured,
    };
  });
  const passportId = await run.settle("passport", async () => {
    const ensured = await ensurePassport(shards, account, input.family, run.now(), input.chosenPassport);
    return {
      outcome: passportOutcome(ensured),
      passport: { passportId: ensured.passportId, outcome: ensured.outcome, at: run.now() },
      value: ensured.passportId,
    };
  });
  await run.settle("publication", async () => {
    await publishOrDefer(env, passportId);
    const pending = await pendingPublication(db, passportId);
    return {
      outcome: pending ? "queued; the publication retry will publish it" : "published",
      patch: { status: "completed", updatedAt: run.now() },
      value: undefined,
    };
  });
  return { account, accountOutcome: outcome, passportId };
}

/**
 * Walks one acquisition through its stages (spec 4.3 steps 4-8), recording each. Every write is
 * idempotent, so a redelivered or concurrently delivered message converges on the same account,
 * parent and passport; a stage that already succeeded (the token already resolved) is not redone.
 * A cloud account seen for the first time stops after its agreement is recorded: the claimant
 * chooses which organisation holds it (`setUpAtClaim`).
 */
export async function runAcquisition(
  env: MarketplaceEnv,
  message: AcquisitionMessage,
  attempts: number,
): Promise<Outcome> {
  // The marketplace's tables, and the organisations and passports it makes, are shard 0's.
  const db = shardsOf(env).shard(0);
  const id = message.acquisition_id;
  const found = await acquisitionToRun(db, id);
  if (!found) {
    log("acquisition_unknown", { acquisition_id: id });
    return { kind: "ack" };
  }
  const { acquisition } = found;
  if (acquisition.status === "completed" || acquisition.status === "failed") return { kind: "ack" };
  const recorded = customerOf(acquisition);
  // When the marketplace last confirmed this customer: events older than that are overridden.
  const identified = recorded && { customer: recorded, confirmedAt: found.resolvedAt ?? acquisition.createdAt };
  // A stage that already succeeded (the customer resolved) is not redone.
  const run = new StageRun(db, id, attempts, identified ? "activation" : "customer_identification");
  try {
    await run.record({
      patch: { status: "processing", updatedAt: run.now() },
      stages: [{ stage: run.stage, update: run.update("running") }],
    });
    const { customer, confirmedAt: resolved } =
      identified ??
      (await run.settle("customer_identification", async () => {
        const value = await identifyCustomer(env, message);
        return {
          outcome: "customer resolved",
          patch: {
            awsAccountId: value.customer.CustomerAWSAccountId ?? null,
            licenseArn: value.customer.LicenseArn ?? null,
            customerIdentifier: value.customer.CustomerIdentifier ?? null,
            productCode: value.customer.ProductCode,
            updatedAt: run.now(),
          },
          value,
        };
      }));
    const confirmedAt = await run.settle("activation", async () => {
      const activated = await activate(env, db, customer, resolved, acquisition.offerType);
      return { outcome: activated.outcome, value: activated.confirmedAt };
    });
    const family = await run.settle("product_mapping", async () => {
      const mapped = productFamily(env, customer.ProductCode);
      return {
        outcome: `mapped to the ${mapped} family`,
        patch: { family: mapped, updatedAt: run.now() },
        value: mapped,
      };
    });

    run.stage = "account";
    const marketplaceCustomerId = await upsertCustomer(db, customer, confirmedAt);
    if (!(await findAccount(db, customer))) {
      // A cloud account seen for the first time: the claimant chooses which organisation holds it
      // (one they already administer, or a new one), so nothing is created before the claim.
      await run.record({ patch: { marketplaceCustomerId, status: "completed", updatedAt: run.now() }, stages: [] });
      log("acquisition_awaiting_claim", { acquisition_id: id });
      return { kind: "ack" };
    }
    const { accountOutcome, passportId } = await setUpAccountAndPassport(env, run, {
      customer,
      marketplaceCustomerId,
      family,
    });
    log("acquisition_completed", { acquisition_id: id, account: accountOutcome, passport: passportId });
    return { kind: "ack" };
  } catch (error) {
    return recordFailure(env, run, error);
  }
}

/** Records a stage's failure: retried later (with its delay shown), or failed for good. */
async function recordFailure(env: MarketplaceEnv, run: StageRun, error: unknown): Promise<Outcome> {
  const { id, stage, attempts } = run;
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
    await run.fail({ code, message });
    return { kind: "ack" };
  }
  const delaySeconds = backoffSeconds(retryBaseSeconds(env), attempts);
  await run.record({
    stages: [
      {
        stage,
        update: run.update("retrying", {
          errorCode: code,
          errorMessage: `${message} Attempt ${attempts} failed; the next one follows in ${delaySeconds} s.`,
        }),
      },
    ],
  });
  return { kind: "retry", delaySeconds, throttled: code === "ThrottlingException" };
}

/**
 * Marks an acquisition that exhausted its retries as failed, visibly, at the stage where it
 * stopped. It never runs a stage again.
 */
export async function failExhausted(env: MarketplaceEnv, message: AcquisitionMessage): Promise<void> {
  const db = shardsOf(env).shard(0);
  const acquisition = await findAcquisition(db, message.acquisition_id);
  if (!acquisition || acquisition.status === "completed" || acquisition.status === "failed") return;
  const stuck = (await stagesOf(db, acquisition.id)).findLast((s) => s.status !== "succeeded");
  const stage = (stuck?.stage as Stage | undefined) ?? "customer_identification";
  const last = stuck?.errorCode ? ` Last error: ${stuck.errorCode}.` : "";
  const run = new StageRun(db, acquisition.id, stuck?.attempts ?? 1, stage);
  await run.fail({ code: "RetriesExhausted", message: `${visibleError("RetriesExhausted")}${last}` });
  log("acquisition_dead_lettered", { acquisition_id: acquisition.id, stage });
}

/**
 * The account, passport and publication stages of a cloud account seen for the first time, run by
 * its claim where the claimant chose (spec 4.3 steps 6, 8, 1.6): their existing organisation or a
 * new one. Racing claims converge on the one account the unique keys let through.
 */
export async function setUpAtClaim(
  env: MarketplaceEnv,
  db: Database,
  row: AcquisitionRow,
  choice: { existing?: ExistingOrganisation; chosenPassport?: string },
): Promise<{ account: MarketplaceAccount; accountOutcome: AccountOutcome; passportId: string }> {
  const customer = customerOf(row);
  if (!customer || !row.marketplaceCustomerId || (row.family !== "api" && row.family !== "agent")) {
    throw new Error("acquisition completed without its resolved customer");
  }
  const run = new StageRun(db, row.id, 1, "account");
  return setUpAccountAndPassport(env, run, {
    customer,
    marketplaceCustomerId: row.marketplaceCustomerId,
    family: row.family,
    ...choice,
  });
}
