import { and, asc, desc, eq, type SQL, sql } from "drizzle-orm";
import { marketplaceAccounts, marketplaceCustomers } from "./acquisitions-schema.ts";
import type { Database } from "./client.ts";
import { events, organisationEvents, organisations, outbox, passports } from "./schema.ts";

export type OrganisationEventRow = typeof organisationEvents.$inferSelect;

/** One change of an organisation as its history and its passports' history record it. */
interface OrganisationChange {
  actor: string;
  at: string;
  kind: string;
  detail: Record<string, unknown>;
}

/** The statement recording one entry of an organisation's own history. */
function organisationEventStatement(db: Database, organisationId: string, event: OrganisationChange) {
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
function renameStatement(db: Database, organisationId: string, name: string) {
  return db.update(organisations).set({ name }).where(eq(organisations.id, organisationId));
}

/**
 * Moves an organisation under `parentId` (or to the top with null) and records `event` in its
 * history, in one batch. The move is one conditional statement: it applies only when the
 * organisation is not the new parent nor one of its ancestors, so no cycle can form, even from two
 * moves racing (D1 runs writes one at a time); the history entry is written only when the move
 * applied (`changes()`), so neither is ever kept without the other. True when applied.
 *
 * The walk up from the new parent has no depth bound: a bound would let a move under a deep enough
 * descendant through (docs/organisations.md). It ends at the top of the tree, which is acyclic
 * before the move; `UNION` (not `UNION ALL`) drops an id already walked, so it would end even on a
 * cycle that somehow got in.
 */
export async function setParent(
  db: Database,
  organisationId: string,
  parentId: string | null,
  event: OrganisationChange,
): Promise<boolean> {
  const notAnAncestor =
    parentId === null
      ? sql`1`
      : sql`${organisationId} NOT IN (
          WITH RECURSIVE ancestors(id) AS (
            SELECT ${parentId}
            UNION
            SELECT o.parent_id FROM organisations o JOIN ancestors a ON o.id = a.id
            WHERE o.parent_id IS NOT NULL
          )
          SELECT id FROM ancestors
        )`;
  const movedHere = sql`exists (select 1 from ${organisations} where ${organisations.id} = ${organisationId} and ${organisations.parentId} is ${parentId})`;
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
    // The records of its passports name the parent: they change with the move, or not at all.
    ...passportVersionStatements(db, organisationId, sql`${movedScope(organisationId)} and ${movedHere}`, event),
  ]);
  return moved.length === 1;
}

/** The passports in `scope` whose records may still change: all but the retired, kept as they were. */
function changeableIn(scope: SQL): SQL {
  return sql`${scope} and ${passports.lifecycle} <> 'retired'`;
}

/** The detail keys a passport outside the organisation is told: which organisation, from what to what. */
const OUTSIDE_DETAIL_KEYS = ["organisation_id", "from", "to"] as const;

/**
 * The change as the history of a passport outside the organisation records it (a child's passport,
 * or one naming it as operator): those passports' members need not be the organisation's, so the
 * actor names the organisation, not its member, and the detail keeps only what the record publishes
 * anyway (the names or ids), never the member's reason (docs/organisations.md).
 */
function changeSeenOutside(organisationId: string, change: OrganisationChange): OrganisationChange {
  const detail: Record<string, unknown> = { organisation_id: organisationId };
  for (const key of OUTSIDE_DETAIL_KEYS) if (key in change.detail) detail[key] = change.detail[key];
  return { ...change, actor: `organisation:${organisationId}`, detail };
}

/**
 * The statements that give every passport in `scope` that is not retired a change of
 * `organisationId` as its next record version: the version bump, a history event and an outbox row
 * each, set-based, so three statements however many passports the organisation holds (each still
 * writes a row per passport). The organisation's own passports record the change as made
 * (`change`); the others in scope as `changeSeenOutside` words it. They go in the batch that makes
 * the organisation's change, so the two commit together or not at all. The request publishes a few
 * of the passports; the outbox rows are marked `bulk`, so the scheduled drain publishes the rest
 * after any other due publication (docs/publication.md, "Organisation changes").
 */
function passportVersionStatements(db: Database, organisationId: string, scope: SQL, change: OrganisationChange) {
  const changeable = changeableIn(scope);
  const outside = changeSeenOutside(organisationId, change);
  const own = sql`${passports.organisationId} = ${organisationId}`;
  // Each row as the table's columns by name: drizzle checks the selection against the table.
  const eventRows = db
    .select({
      seq: sql<number>`null`.as("seq"),
      passportId: passports.id,
      organisationId: passports.organisationId,
      actor: sql<string>`case when ${own} then ${change.actor} else ${outside.actor} end`.as("actor"),
      at: sql<string>`${change.at}`.as("at"),
      kind: sql<string>`${change.kind}`.as("kind"),
      detail:
        sql<string>`case when ${own} then ${JSON.stringify(change.detail)} else ${JSON.stringify(outside.detail)} end`.as(
          "detail",
        ),
      recordVersion: passports.recordVersion,
    })
    .from(passports)
    .where(changeable);
  const outboxRows = db
    .select({
      passportId: passports.id,
      recordVersion: passports.recordVersion,
      attempts: sql<number>`0`.as("attempts"),
      nextAttemptAt: sql<string>`${change.at}`.as("next_attempt_at"),
      lastError: sql<null>`null`.as("last_error"),
      bulk: sql<number>`1`.as("bulk"),
    })
    .from(passports)
    .where(changeable);
  return [
    db
      .update(passports)
      .set({ recordVersion: sql`${passports.recordVersion} + 1`, updatedAt: change.at })
      .where(changeable),
    db.insert(events).select(eventRows),
    db
      .insert(outbox)
      .select(outboxRows)
      .onConflictDoUpdate({
        target: outbox.passportId,
        set: {
          recordVersion: sql`excluded.record_version`,
          nextAttemptAt: sql`excluded.next_attempt_at`,
          attempts: 0,
          // A row already owed for a change of the passport itself stays ahead of the bulk.
          bulk: sql`min(${outbox.bulk}, excluded.bulk)`,
        },
      }),
  ] as const;
}

/** The scope of a move: the organisation's own passports (their records name its parent). */
export function movedScope(organisationId: string): SQL {
  return sql`${passports.organisationId} = ${organisationId}`;
}

/**
 * The scope of a rename: the organisation's passports, its children's (their records name it as the
 * parent) and those naming it as their separate operator. All of them are in the organisation's
 * shard: a sub-organisation is placed with its parent, and a parent or operator in another shard is
 * refused (`crosses-shards`, docs/sharding.md), so one shard's statement finds every one.
 */
export function renamedScope(organisationId: string): SQL {
  return sql`(${passports.organisationId} = ${organisationId} or ${passports.organisationId} in (select ${organisations.id} from ${organisations} where ${organisations.parentId} = ${organisationId}) or ${passports.operatorOrganisationId} = ${organisationId})`;
}

/** Organisations whose parent is one of `organisationIds`. */
export async function childrenOf(db: Database, organisationId: string) {
  return db
    .select({ id: organisations.id, name: organisations.name })
    .from(organisations)
    .where(eq(organisations.parentId, organisationId))
    .orderBy(asc(organisations.name), asc(organisations.id));
}

/** Up to `limit` passports in `scope` that may still change (not retired), in id order. */
export async function changeablePassportsIn(db: Database, scope: SQL, limit: number) {
  return db
    .select({ id: passports.id })
    .from(passports)
    .where(changeableIn(scope))
    .orderBy(asc(passports.id))
    .limit(limit);
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

/**
 * Renames an organisation, records `event` in its history and gives every record in `scope` (its
 * passports, its children's, which name it as parent, and those naming it as operator) a new
 * version, in one batch; only its own passports' history keeps the actor and the reason.
 */
export async function renameOrganisation(
  db: Database,
  organisationId: string,
  name: string,
  event: OrganisationChange,
  scope: SQL,
) {
  await db.batch([
    renameStatement(db, organisationId, name),
    organisationEventStatement(db, organisationId, event),
    ...passportVersionStatements(db, organisationId, scope, {
      ...event,
      detail: { organisation_id: organisationId, ...event.detail },
    }),
  ]);
}
