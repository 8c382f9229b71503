import { and, asc, desc, eq, inArray, ne, sql } from "drizzle-orm";
import { marketplaceAccounts, marketplaceCustomers } from "./acquisitions-schema.ts";
import type { Database } from "./client.ts";
import { organisationEvents, organisations, passports } from "./schema.ts";

export type OrganisationEventRow = typeof organisationEvents.$inferSelect;

/** The statement recording one entry of an organisation's own history. */
export function organisationEventStatement(
  db: Database,
  organisationId: string,
  event: { actor: string; at: string; kind: string; detail: Record<string, unknown> },
) {
  return db.insert(organisationEvents).values({ organisationId, ...event });
}

/** The organisation's own history, newest first. */
export function organisationHistory(db: Database, organisationId: string, limit = 50): Promise<OrganisationEventRow[]> {
  return db
    .select()
    .from(organisationEvents)
    .where(eq(organisationEvents.organisationId, organisationId))
    .orderBy(desc(organisationEvents.seq))
    .limit(limit);
}

/** The statement renaming an organisation. */
export function renameStatement(db: Database, organisationId: string, name: string) {
  return db.update(organisations).set({ name }).where(eq(organisations.id, organisationId));
}

/**
 * Moves an organisation under `parentId` (or to the top with null) and records `event` in its
 * history, in one batch. The move is one conditional statement: it applies only when the
 * organisation is not the new parent nor one of its ancestors, so no cycle can form, even from two
 * moves racing (D1 runs writes one at a time); the history entry is written only when the move
 * applied (`changes()`), so neither is ever kept without the other. True when applied.
 */
export async function setParent(
  db: Database,
  organisationId: string,
  parentId: string | null,
  event: { actor: string; at: string; kind: string; detail: Record<string, unknown> },
): Promise<boolean> {
  const notAnAncestor =
    parentId === null
      ? sql`1`
      : sql`${organisationId} NOT IN (
          WITH RECURSIVE ancestors(id, depth) AS (
            SELECT ${parentId}, 0
            UNION ALL
            SELECT o.parent_id, a.depth + 1 FROM organisations o JOIN ancestors a ON o.id = a.id
            WHERE o.parent_id IS NOT NULL AND a.depth < 64
          )
          SELECT id FROM ancestors
        )`;
  const [moved] = await db.batch([
    db
      .update(organisations)
      .set({ parentId })
      .where(and(eq(organisations.id, organisationId), notAnAncestor))
      .returning({ id: organisations.id }),
    db
      .insert(organisationEvents)
      .select(
        sql`SELECT NULL, ${organisationId}, ${event.actor}, ${event.at}, ${event.kind}, ${JSON.stringify(event.detail)} WHERE changes() = 1`,
      ),
  ]);
  return moved.length === 1;
}

/** Organisations whose parent is one of `organisationIds`. */
export async function childrenOf(db: Database, organisationId: string) {
  return db
    .select({ id: organisations.id, name: organisations.name })
    .from(organisations)
    .where(eq(organisations.parentId, organisationId))
    .orderBy(asc(organisations.name), asc(organisations.id));
}

/** Passports whose public record names one of these organisations and may still change (not retired). */
export async function changeablePassportsIn(db: Database, organisationIds: string[]) {
  if (organisationIds.length === 0) return [];
  return db
    .select({ id: passports.id })
    .from(passports)
    .where(and(inArray(passports.organisationId, organisationIds), ne(passports.lifecycle, "retired")))
    .orderBy(asc(passports.id));
}

/**
 * The marketplace subscriptions (agreements) held through this organisation's marketplace
 * account, with their entitlement status as last reported (spec 4.4 products and entitlements).
 */
export async function subscriptionsOf(db: Database, organisationId: string) {
  return db
    .select({
      productCode: marketplaceCustomers.productCode,
      licenseArn: marketplaceCustomers.licenseArn,
      awsAccountId: marketplaceCustomers.awsAccountId,
      status: marketplaceCustomers.status,
      statusAt: marketplaceCustomers.statusAt,
      lastEvent: marketplaceCustomers.lastEvent,
      since: marketplaceCustomers.createdAt,
    })
    .from(marketplaceCustomers)
    .innerJoin(marketplaceAccounts, eq(marketplaceCustomers.marketplaceAccountId, marketplaceAccounts.id))
    .where(eq(marketplaceAccounts.organisationId, organisationId))
    .orderBy(asc(marketplaceCustomers.createdAt), asc(marketplaceCustomers.id));
}
