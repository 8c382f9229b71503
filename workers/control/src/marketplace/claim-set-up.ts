import type { Database } from "../db/client.ts";
import { pendingPublication } from "../db/passports.ts";
import { publishOrDefer } from "../publication/index.ts";
import type { ResolvedCustomer } from "./adapter.ts";
import type { MarketplaceEnv } from "./config.ts";
import {
  type AccountOutcome,
  type ExistingOrganisation,
  ensureAccount,
  ensurePassport,
  type MarketplaceAccount,
} from "./queries/accounts.ts";
import { type AcquisitionRow, recordProgress } from "./queries/acquisitions.ts";

const ACCOUNT_OUTCOMES: Record<AccountOutcome, string> = {
  created: "account and parent organisation created",
  linked: "linked to your existing organisation",
  reused: "existing account reused",
};

/** The resolved customer an acquisition recorded, once customer identification succeeded. */
export function customerOf(row: AcquisitionRow): ResolvedCustomer | undefined {
  if (!row.productCode || !(row.awsAccountId || row.customerIdentifier)) return undefined;
  return {
    CustomerAWSAccountId: row.awsAccountId ?? undefined,
    CustomerIdentifier: row.customerIdentifier ?? undefined,
    LicenseArn: row.licenseArn ?? undefined,
    ProductCode: row.productCode,
  };
}

/**
 * The account, passport and publication stages (spec 4.3 steps 6, 8): the cloud account's account
 * reused, else linked to `existing` or created; its passport of the family reused, adopted from the
 * organisation (the one the claimant chose, else the oldest active one), else issued; then published.
 * Each stage's records are one batch, and the last completes the acquisition. Every write is idempotent or guarded by a unique key,
 * so a retried or concurrent run converges on one account, parent and passport. Runs in the queue
 * consumer for a cloud account that already has an account, and in the claim for one that has none
 * yet (the claimant chooses where the subscription belongs).
 */
export async function setUpAccountAndPassport(
  env: MarketplaceEnv,
  db: Database,
  row: AcquisitionRow,
  input: {
    customer: ResolvedCustomer;
    marketplaceCustomerId: string;
    family: "api" | "agent";
    existing?: ExistingOrganisation;
    /** The organisation's passport the claimant chose to adopt; omitted: the oldest active one. */
    chosenPassport?: string;
    attempts: number;
    now: () => string;
  },
): Promise<{ account: MarketplaceAccount; accountOutcome: AccountOutcome; passportId: string }> {
  const { now, attempts } = input;
  const { account, outcome: accountOutcome } = await ensureAccount(
    db,
    input.customer,
    input.marketplaceCustomerId,
    input.existing,
  );
  await recordProgress(db, row.id, {
    account: {
      marketplaceCustomerId: input.marketplaceCustomerId,
      marketplaceAccountId: account.id,
      outcome: accountOutcome,
      firstTime: accountOutcome === "reused" ? "" : accountOutcome,
      at: now(),
    },
    stages: [
      {
        stage: "account",
        update: { status: "succeeded", outcome: ACCOUNT_OUTCOMES[accountOutcome], attempts, at: now() },
      },
    ],
  });

  const { passportId, outcome: passportOutcome } = await ensurePassport(
    db,
    account,
    input.family,
    now(),
    input.chosenPassport,
  );
  const issued = passportOutcome === "issued" ? "new API passport issued" : "existing passport reused";
  await recordProgress(db, row.id, {
    passport: { passportId, outcome: passportOutcome, at: now() },
    stages: [{ stage: "passport", update: { status: "succeeded", outcome: issued, attempts, at: now() } }],
  });

  await publishOrDefer(env, passportId);
  const pending = await pendingPublication(db, passportId);
  const published = pending ? "queued; the publication retry will publish it" : "published";
  // The last stage completes an acquisition still in progress (the queue consumer's); one claimed
  // after it completed is left as it is.
  await recordProgress(db, row.id, {
    patch: { status: "completed", updatedAt: now() },
    stages: [{ stage: "publication", update: { status: "succeeded", outcome: published, attempts, at: now() } }],
  });
  return { account, accountOutcome, passportId };
}
