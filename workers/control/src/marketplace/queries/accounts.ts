import { mintIdentityId } from "@passport/domain";
import { and, asc, desc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import {
  marketplaceAccountPassports,
  marketplaceAccounts,
  marketplaceCustomers,
} from "../../db/acquisitions-schema.ts";
import { type Database, isConstraintError, UNIQUE_VIOLATION } from "../../db/client.ts";
import { createPassportStatements } from "../../db/passports.ts";
import { organisations, passports } from "../../db/schema.ts";
import type { Shards } from "../../db/shards.ts";
import { Refusal } from "../../failures.ts";
import type { ResolvedCustomer } from "../adapter.ts";
import { randomReference } from "../crypto.ts";

export type MarketplaceAccount = typeof marketplaceAccounts.$inferSelect;

/** Names given to the organisations made for a marketplace customer; they are public, so neutral. */
const ACCOUNT_ORGANISATION_NAME = "Marketplace account";
const PARENT_ORGANISATION_NAME = "Marketplace customer";
const MARKETPLACE_ACTOR = "marketplace-acquisition";

/**
 * The key of one agreement: `CustomerAWSAccountId` + `LicenseArn` for current integrations,
 * `CustomerIdentifier` + `ProductCode` for legacy ones (platform facts, "Concurrent Agreements").
 * @example
 * customerKey({ CustomerAWSAccountId: "111122223333", LicenseArn: "arn:…", ProductCode: "p" }); // "license:111122223333:arn:…"
 */
function customerKey(customer: ResolvedCustomer): string {
  if (customer.CustomerAWSAccountId && customer.LicenseArn) {
    return `license:${customer.CustomerAWSAccountId}:${customer.LicenseArn}`;
  }
  if (customer.CustomerIdentifier) return `legacy:${customer.CustomerIdentifier}:${customer.ProductCode}`;
  return `account-product:${customer.CustomerAWSAccountId}:${customer.ProductCode}`;
}

/** The key of the cloud account behind an agreement: one account may hold several agreements. */
function accountKey(customer: Pick<ResolvedCustomer, "CustomerAWSAccountId" | "CustomerIdentifier">): string {
  return customer.CustomerAWSAccountId
    ? `aws-account:${customer.CustomerAWSAccountId}`
    : `legacy-customer:${customer.CustomerIdentifier}`;
}

function organisationId(): string {
  return `org_mp_${crypto.randomUUID().replaceAll("-", "")}`;
}

/**
 * Records (or refreshes) the agreement a registration token resolved to, as active from `at` (when
 * the marketplace last confirmed it) unless a later marketplace event already said otherwise.
 * Returns its id.
 */
export async function upsertCustomer(db: Database, customer: ResolvedCustomer, at: string): Promise<string> {
  const [row] = await db
    .insert(marketplaceCustomers)
    .values({
      id: randomReference("mpc_"),
      customerKey: customerKey(customer),
      awsAccountId: customer.CustomerAWSAccountId,
      licenseArn: customer.LicenseArn,
      customerIdentifier: customer.CustomerIdentifier,
      productCode: customer.ProductCode,
      status: "active",
      statusAt: at,
      lastEvent: "resolved",
      updatedAt: at,
    })
    .onConflictDoUpdate({
      target: marketplaceCustomers.customerKey,
      set: {
        productCode: customer.ProductCode,
        status: sql`CASE WHEN ${marketplaceCustomers.statusAt} <= ${at} THEN 'active' ELSE ${marketplaceCustomers.status} END`,
        lastEvent: sql`CASE WHEN ${marketplaceCustomers.statusAt} <= ${at} THEN 'resolved' ELSE ${marketplaceCustomers.lastEvent} END`,
        statusAt: sql`max(${marketplaceCustomers.statusAt}, ${at})`,
        updatedAt: at,
      },
    })
    .returning({ id: marketplaceCustomers.id });
  if (!row) throw new Error("marketplace customer upsert returned nothing");
  return row.id;
}

/** The subscription status the marketplace last reported for a customer's agreement, and when. */
export async function recordedSubscription(db: Database, customer: ResolvedCustomer) {
  const [recorded] = await db
    .select({ status: marketplaceCustomers.status, statusAt: marketplaceCustomers.statusAt })
    .from(marketplaceCustomers)
    .where(eq(marketplaceCustomers.customerKey, customerKey(customer)));
  return recorded;
}

async function findAccountByKey(db: Database, key: string): Promise<MarketplaceAccount | undefined> {
  const [row] = await db.select().from(marketplaceAccounts).where(eq(marketplaceAccounts.customerKey, key));
  return row;
}

/** The account this cloud account already has, if any subscription of it was ever claimed. */
export function findAccount(
  db: Database,
  customer: Pick<ResolvedCustomer, "CustomerAWSAccountId" | "CustomerIdentifier">,
): Promise<MarketplaceAccount | undefined> {
  return findAccountByKey(db, accountKey(customer));
}

/** An organisation the claimant already administers, to hold the subscription instead of a new one. */
export interface ExistingOrganisation {
  organisationId: string;
  /** Its parent, or the organisation itself when it has none. */
  parentOrganisationId: string;
}

/** The chosen organisation already holds another cloud account's subscriptions (its unique key). */
class OrganisationAlreadyLinked extends Refusal {
  constructor() {
    super("organisation-already-linked", {
      detail:
        "That organisation already holds another cloud account's marketplace subscriptions. Choose another organisation or a new one.",
    });
  }
}

export type AccountOutcome = "created" | "linked" | "reused";

/**
 * Reuses the account organisation and parent organisation of this cloud account, or sets them up
 * once (spec 4.3 step 6, 1.6): linked to `existing` (an organisation the claimant administers), or
 * else created. The account row is written in the same transaction as any new organisations, and
 * its unique keys (the cloud account; the organisation) abort every racing writer but one: the
 * losers' organisations roll back with it, so racing claims or deliveries leave neither a second
 * account nor an orphaned organisation. The marketplace's tables are shard 0's and refer to these
 * organisations by foreign key, so new ones are placed in shard 0 (pinned, docs/sharding.md) before
 * their rows are written; a loser's placement stays in the directory naming no organisation, which
 * nothing reads.
 */
export async function ensureAccount(
  shards: Shards,
  customer: ResolvedCustomer,
  marketplaceCustomerId: string,
  existing?: ExistingOrganisation,
): Promise<{ account: MarketplaceAccount; outcome: AccountOutcome }> {
  const db = shards.shard(0);
  const key = accountKey(customer);
  let account = await findAccountByKey(db, key);
  let outcome: AccountOutcome = "reused";
  if (!account) {
    const organisation = existing?.organisationId ?? organisationId();
    const parent = existing?.parentOrganisationId ?? organisationId();
    const accountRow = db.insert(marketplaceAccounts).values({
      id: randomReference("mpa_"),
      customerKey: key,
      awsAccountId: customer.CustomerAWSAccountId,
      organisationId: organisation,
      parentOrganisationId: parent,
    });
    try {
      if (existing) {
        await accountRow;
        outcome = "linked";
      } else {
        await shards.placeOrganisation(parent, { shard: 0 });
        await shards.placeOrganisation(organisation, { shard: 0 });
        await db.batch([
          db.insert(organisations).values({ id: parent, name: PARENT_ORGANISATION_NAME }),
          db.insert(organisations).values({ id: organisation, name: ACCOUNT_ORGANISATION_NAME, parentId: parent }),
          accountRow,
        ]);
        outcome = "created";
      }
    } catch (error) {
      if (!isConstraintError(error, UNIQUE_VIOLATION)) throw error;
    }
    account = await findAccountByKey(db, key);
    if (!account && existing) throw new OrganisationAlreadyLinked();
    if (!account) throw new Error("marketplace account vanished after insert");
  }
  await db
    .update(marketplaceCustomers)
    .set({ marketplaceAccountId: account.id })
    .where(and(eq(marketplaceCustomers.id, marketplaceCustomerId), isNull(marketplaceCustomers.marketplaceAccountId)));
  return { account, outcome };
}

async function passportSlot(db: Database, accountId: string, family: "api" | "agent") {
  const [row] = await db
    .select()
    .from(marketplaceAccountPassports)
    .where(
      and(
        eq(marketplaceAccountPassports.marketplaceAccountId, accountId),
        eq(marketplaceAccountPassports.family, family),
      ),
    );
  return row;
}

/** At most this many passports are offered to choose from at a claim; more is an organisation to tidy first. */
export const MAX_ADOPTION_CANDIDATES = 50;

/**
 * What makes a passport adoptable by a marketplace account of its organisation (spec 1.6, 3, 4.3
 * step 8). A passport in use is; a suspended one is the same logical object, temporarily out of
 * use, so it is adopted when the organisation has no passport of the family in use: it stays
 * suspended, and its reactivation re-evaluates it (docs/lifecycle.md). Beside one in use it is
 * not offered: that one already carries the organisation's object. A revoked or retired passport
 * is never repurposed, and a duplicate never operated. The condition is written against the
 * unaliased `passports` table, so the statement reading it must select from that table.
 */
function adoptable(organisationId: string, family: "api" | "agent") {
  return and(
    eq(passports.organisationId, organisationId),
    eq(passports.family, family),
    isNull(passports.duplicateOf),
    or(
      eq(passports.lifecycle, "active"),
      and(
        eq(passports.lifecycle, "suspended"),
        sql`NOT EXISTS (SELECT 1 FROM passports AS in_use WHERE in_use.organisation_id = passports.organisation_id AND in_use.family = passports.family AND in_use.lifecycle = 'active' AND in_use.duplicate_of IS NULL)`,
      ),
    ),
  );
}

/** The passports of this family an organisation could bring to a marketplace account, oldest first. */
export async function adoptionCandidates(
  db: Database,
  organisationId: string,
  family: "api" | "agent",
): Promise<{ id: string; displayName: string | null; lifecycle: string }[]> {
  return db
    .select({ id: passports.id, displayName: passports.displayName, lifecycle: passports.lifecycle })
    .from(passports)
    .where(adoptable(organisationId, family))
    .orderBy(asc(passports.createdAt), asc(passports.id))
    .limit(MAX_ADOPTION_CANDIDATES + 1);
}

/**
 * The organisation's passport of this family that a new one follows: the one most recently
 * revoked or retired (never a duplicate), which is never repurposed (spec 3). Undefined when it
 * had none.
 */
async function predecessorOf(db: Database, organisationId: string, family: "api" | "agent") {
  const [row] = await db
    .select({ id: passports.id, lifecycle: passports.lifecycle })
    .from(passports)
    .where(
      and(
        eq(passports.organisationId, organisationId),
        eq(passports.family, family),
        inArray(passports.lifecycle, ["revoked", "retired"]),
        isNull(passports.duplicateOf),
      ),
    )
    .orderBy(desc(passports.stateAsOf), desc(passports.id))
    .limit(1);
  return row;
}

/** The passport the claimant chose is no longer an active passport of the organisation. */
export class PassportNotAdoptable extends Error {}

/** What the passport stage did: reused (adopted) a passport, or issued one, and what that one follows. */
export interface EnsuredPassport {
  passportId: string;
  outcome: "issued" | "reused";
  /** A reused passport's lifecycle when it is not in use (`suspended`): its reactivation re-evaluates it. */
  suspended?: boolean;
  /** An issued passport's predecessor: the organisation's revoked or retired passport of the family. */
  follows?: { identityId: string; lifecycle: string };
}

async function reused(db: Database, passportId: string): Promise<EnsuredPassport> {
  const [row] = await db.select({ lifecycle: passports.lifecycle }).from(passports).where(eq(passports.id, passportId));
  return { passportId, outcome: "reused", ...(row?.lifecycle === "suspended" ? { suspended: true } : {}) };
}

/**
 * Reuses the account's passport of this family or issues one (spec 4.3 step 8, 1.6). An adoptable
 * passport of the account organisation (above: in use, else suspended) is adopted before a new id
 * is minted: `chosen` when the claimant chose one, else the oldest. Adoption is one conditional
 * statement (the slot is inserted from the passport row only while it is adoptable and in the
 * organisation), so a passport suspended in between, beside one in use, is never adopted. A new
 * passport is created in the same transaction as the account's passport slot, whose primary key
 * (account, family) aborts every racing writer but one, so no second identity survives; its
 * creation event names the revoked or retired passport it follows, if any (`detail.follows`). The
 * account's organisation is in shard 0 (`ensureAccount`, and a claim links only one there), so the
 * passport is too; its id is registered in the directory before its rows are written.
 */
export async function ensurePassport(
  shards: Shards,
  account: MarketplaceAccount,
  family: "api" | "agent",
  at: string,
  chosen?: string,
): Promise<EnsuredPassport> {
  const db = shards.shard(0);
  const existing = await passportSlot(db, account.id, family);
  if (existing) return reused(db, existing.passportId);

  const condition = and(adoptable(account.organisationId, family), chosen ? eq(passports.id, chosen) : undefined);
  await db
    .insert(marketplaceAccountPassports)
    .select(
      sql`select ${account.id}, ${family}, ${passports.id}, ${at} from ${passports} where ${condition} order by ${passports.createdAt}, ${passports.id} limit 1`,
    )
    .onConflictDoNothing();
  const slot = await passportSlot(db, account.id, family);
  if (slot) return reused(db, slot.passportId);
  if (chosen) throw new PassportNotAdoptable(chosen);

  const id = mintIdentityId();
  const predecessor = await predecessorOf(db, account.organisationId, family);
  await shards.registerIdentity(id, account.organisationId);
  try {
    await db.batch([
      ...createPassportStatements(db, {
        id,
        organisationId: account.organisationId,
        family,
        displayName: family === "api" ? "API passport" : "Agent passport",
        bindings: [],
        follows: predecessor?.id,
        actor: MARKETPLACE_ACTOR,
        at,
      }),
      db.insert(marketplaceAccountPassports).values({ marketplaceAccountId: account.id, family, passportId: id }),
    ]);
    return {
      passportId: id,
      outcome: "issued",
      ...(predecessor ? { follows: { identityId: predecessor.id, lifecycle: predecessor.lifecycle } } : {}),
    };
  } catch (error) {
    const winner = isConstraintError(error, UNIQUE_VIOLATION) ? await passportSlot(db, account.id, family) : undefined;
    if (winner) return reused(db, winner.passportId);
    throw error;
  }
}
