import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { organisations, passports } from "./schema.ts";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

const ACQUISITION_STATUSES = ["received", "processing", "completed", "failed"] as const;
export type AcquisitionStatus = (typeof ACQUISITION_STATUSES)[number];

const STAGE_STATUSES = ["running", "retrying", "succeeded", "failed"] as const;
export type StageStatus = (typeof STAGE_STATUSES)[number];

/**
 * A cloud account that reached us through the marketplace, and the account organisation and
 * parent organisation made for it once. `customer_key` is `aws-account:{CustomerAWSAccountId}`, or
 * `legacy-customer:{CustomerIdentifier}` for a legacy answer without an account id; its unique
 * index is what makes a second subscription, a re-posted token or a duplicate delivery find this
 * row instead of creating another (spec 1.6).
 */
export const marketplaceAccounts = sqliteTable("marketplace_accounts", {
  id: text("id").primaryKey(),
  customerKey: text("customer_key").notNull().unique(),
  awsAccountId: text("aws_account_id"),
  organisationId: text("organisation_id")
    .notNull()
    .unique()
    .references(() => organisations.id),
  parentOrganisationId: text("parent_organisation_id")
    .notNull()
    .references(() => organisations.id),
  createdAt: text("created_at").notNull().default(now),
});

/**
 * One marketplace agreement or license of a cloud account (several per account are allowed).
 * `customer_key` is `license:{CustomerAWSAccountId}:{LicenseArn}` for current integrations,
 * `legacy:{CustomerIdentifier}:{ProductCode}` for legacy products, or
 * `agreement:{accountId}:{agreementId}` for an agreement event that names no license.
 */
export const marketplaceCustomers = sqliteTable(
  "marketplace_customers",
  {
    id: text("id").primaryKey(),
    customerKey: text("customer_key").notNull().unique(),
    marketplaceAccountId: text("marketplace_account_id").references(() => marketplaceAccounts.id),
    awsAccountId: text("aws_account_id"),
    licenseArn: text("license_arn"),
    customerIdentifier: text("customer_identifier"),
    productCode: text("product_code"),
    agreementId: text("agreement_id"),
    /** Entitlement as last reported: active, unsubscribe_pending, ended, deprovisioned, failed. */
    status: text("status").notNull(),
    /** Time of the marketplace event (or resolution) that set `status`; older events do not override it. */
    statusAt: text("status_at").notNull(),
    lastEvent: text("last_event"),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("marketplace_customers_account").on(t.awsAccountId),
    index("marketplace_customers_marketplace_account").on(t.marketplaceAccountId),
  ],
);

/** The API passport (per family) a marketplace account holds; the primary key allows one. */
export const marketplaceAccountPassports = sqliteTable(
  "marketplace_account_passports",
  {
    marketplaceAccountId: text("marketplace_account_id")
      .notNull()
      .references(() => marketplaceAccounts.id),
    family: text("family", { enum: ["api", "agent"] }).notNull(),
    passportId: text("passport_id")
      .notNull()
      .unique()
      .references(() => passports.id),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [primaryKey({ columns: [t.marketplaceAccountId, t.family] })],
);

/**
 * One registration-token handoff. Only a keyed hash of the token is kept (`token_hash`, unique:
 * the same token posted twice is the same acquisition); the token itself is never stored.
 */
export const acquisitions = sqliteTable(
  "acquisitions",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    status: text("status", { enum: ACQUISITION_STATUSES }).notNull(),
    offerType: text("offer_type"),
    awsAccountId: text("aws_account_id"),
    licenseArn: text("license_arn"),
    customerIdentifier: text("customer_identifier"),
    productCode: text("product_code"),
    family: text("family", { enum: ["api", "agent"] }),
    marketplaceCustomerId: text("marketplace_customer_id").references(() => marketplaceCustomers.id),
    marketplaceAccountId: text("marketplace_account_id").references(() => marketplaceAccounts.id),
    accountOutcome: text("account_outcome", { enum: ["created", "reused"] }),
    passportId: text("passport_id").references(() => passports.id),
    passportOutcome: text("passport_outcome", { enum: ["issued", "reused"] }),
    failedStage: text("failed_stage"),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    /** Keyed hash of the current single-use claim reference; cleared when it is used. */
    claimHash: text("claim_hash"),
    claimExpiresAt: text("claim_expires_at"),
    claimedBy: text("claimed_by"),
    claimedAt: text("claimed_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("acquisitions_token_hash").on(t.tokenHash),
    index("acquisitions_account").on(t.awsAccountId),
    index("acquisitions_marketplace_account").on(t.marketplaceAccountId, t.createdAt),
  ],
);

/** The progress of one acquisition, one row per stage reached (spec 3 "acquisition progression"). */
export const acquisitionStages = sqliteTable(
  "acquisition_stages",
  {
    acquisitionId: text("acquisition_id")
      .notNull()
      .references(() => acquisitions.id),
    stage: text("stage").notNull(),
    status: text("status", { enum: STAGE_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(1),
    outcome: text("outcome"),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    startedAt: text("started_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.acquisitionId, t.stage] })],
);

/** Marketplace subscription events already applied; the primary key makes a replay a no-op. */
export const marketplaceEvents = sqliteTable(
  "marketplace_events",
  {
    eventId: text("event_id").primaryKey(),
    format: text("format", { enum: ["eventbridge", "sns"] }).notNull(),
    kind: text("kind").notNull(),
    customerKey: text("customer_key"),
    occurredAt: text("occurred_at").notNull(),
    outcome: text("outcome").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (t) => [index("marketplace_events_customer").on(t.customerKey, t.occurredAt)],
);
