import { and, eq, ne, or, sql } from "drizzle-orm";
import type { Database } from "./client.ts";
import { members, organisations } from "./schema.ts";
import type { Shards } from "./shards.ts";

export type Role = (typeof members.$inferSelect)["role"];

export interface Membership {
  organisationId: string;
  role: Role;
}

export async function membershipsOf(db: Database, subject: string): Promise<Membership[]> {
  return db
    .select({ organisationId: members.organisationId, role: members.role })
    .from(members)
    .where(eq(members.subject, subject))
    .orderBy(members.organisationId);
}

export async function membershipIn(db: Database, subject: string, organisationId: string) {
  const [row] = await db
    .select({ organisationId: members.organisationId, role: members.role })
    .from(members)
    .where(and(eq(members.subject, subject), eq(members.organisationId, organisationId)));
  return row;
}

/**
 * Development only: makes sure the organisation and membership a development token names exist.
 * Written only when the membership is new or its role changed, so a read stays a read (D1 at its
 * size limit refuses every write, docs/platform-model.md).
 */
export async function ensureDevelopmentMembership(
  shards: Shards,
  subject: string,
  organisationId: string,
  role: Role,
): Promise<void> {
  const db = shards.shard(await developmentPlacement(shards, organisationId, subject));
  if ((await membershipIn(db, subject, organisationId))?.role === role) return;
  await db.batch([
    db.insert(organisations).values({ id: organisationId, name: organisationId }).onConflictDoNothing(),
    db
      .insert(members)
      .values({ organisationId, subject, role })
      .onConflictDoUpdate({ target: [members.organisationId, members.subject], set: { role } }),
  ]);
}

/**
 * The shard of the organisations `subject` already belongs to, if any (the first found, shard 0
 * first). A person's new organisation is placed beside their others, so the relationships a member
 * of both may set between them (parent, operator, transfer) stay inside one shard
 * (docs/sharding.md); a newcomer's first organisation is placed by hash, which spreads tenants.
 */
export async function shardOfSubject(shards: Shards, subject: string): Promise<number | undefined> {
  const found = await Promise.all(
    shards
      .everyShard()
      .map((db) =>
        db
          .select({ organisationId: members.organisationId })
          .from(members)
          .where(eq(members.subject, subject))
          .limit(1),
      ),
  );
  const index = found.findIndex((rows) => rows.length > 0);
  return index === -1 ? undefined : index;
}

/**
 * Where a development token's organisation is: the directory's row; else shard 0 for one that
 * exists there without a row (seeded before sharding, or by a test's own SQL), recorded so; else
 * a new organisation's placement, beside the subject's other organisations.
 */
async function developmentPlacement(shards: Shards, organisationId: string, subject: string): Promise<number> {
  const placed = await shards.placementOf(organisationId);
  if (placed.known) return placed.shard;
  const inShardZero = await shards.shard(0).query.organisations.findFirst({
    columns: { id: true },
    where: eq(organisations.id, organisationId),
  });
  if (inShardZero) return shards.placeOrganisation(organisationId, { shard: 0 });
  return shards.placeOrganisation(organisationId, { shard: await shardOfSubject(shards, subject) });
}

export async function organisationWithParent(db: Database, organisationId: string) {
  const organisation = await db.query.organisations.findFirst({ where: eq(organisations.id, organisationId) });
  if (!organisation) return undefined;
  const parent = organisation.parentId
    ? await db.query.organisations.findFirst({ where: eq(organisations.id, organisation.parentId) })
    : undefined;
  return { organisation, parent };
}

export async function organisationsOf(db: Database, subject: string) {
  return db
    .select({
      id: organisations.id,
      name: organisations.name,
      parentId: organisations.parentId,
      role: members.role,
      createdAt: organisations.createdAt,
    })
    .from(members)
    .innerJoin(organisations, eq(members.organisationId, organisations.id))
    .where(eq(members.subject, subject))
    .orderBy(organisations.id);
}

export async function membersOf(db: Database, organisationId: string) {
  return db
    .select({ subject: members.subject, role: members.role, createdAt: members.createdAt })
    .from(members)
    .where(eq(members.organisationId, organisationId))
    .orderBy(members.subject);
}

export function createOrganisationStatements(
  db: Database,
  input: { id: string; name: string; parentId?: string; ownerSubject: string },
) {
  return [
    db.insert(organisations).values({ id: input.id, name: input.name, parentId: input.parentId }),
    db.insert(members).values({ organisationId: input.id, subject: input.ownerSubject, role: "owner" }),
  ] as const;
}

/** Creates an organisation with `ownerSubject` as its owner, in one batch. */
export async function createOrganisation(
  db: Database,
  input: { id: string; name: string; parentId?: string; ownerSubject: string },
) {
  await db.batch(createOrganisationStatements(db, input));
}

/** True when another member of the organisation than `subject` holds the owner role. */
const anotherOwnerThan = (organisationId: string, subject: string) =>
  sql`EXISTS (SELECT 1 FROM members AS other WHERE other.organisation_id = ${organisationId} AND other.role = 'owner' AND other.subject <> ${subject})`;

/**
 * Adds a member or changes a member's role. A change is refused when it would leave the
 * organisation without an owner, or when it touches an owner and `byOwner` is false. Both rules
 * are part of the one statement (an upsert whose update is guarded), so two owners demoting each
 * other at the same moment cannot both succeed. Resolves to whether the member now has `role`.
 */
export async function putMember(
  db: Database,
  organisationId: string,
  subject: string,
  role: Role,
  byOwner = true,
): Promise<boolean> {
  const result = await db.run(
    sql`INSERT INTO ${members} (organisation_id, subject, role) VALUES (${organisationId}, ${subject}, ${role})
        ON CONFLICT (organisation_id, subject) DO UPDATE SET role = excluded.role
        WHERE members.role <> 'owner'
           OR (${byOwner ? 1 : 0} = 1 AND (excluded.role = 'owner' OR ${anotherOwnerThan(organisationId, subject)}))`,
  );
  return result.meta.changes > 0;
}

/**
 * Removes a member unless that would leave the organisation without an owner, or the member is an
 * owner and `byOwner` is false. The rules are part of the one DELETE statement, so two owners
 * removing each other at the same moment cannot both succeed. Resolves to whether the member was
 * removed.
 */
export async function removeMember(
  db: Database,
  organisationId: string,
  subject: string,
  byOwner = true,
): Promise<boolean> {
  const result = await db
    .delete(members)
    .where(
      and(
        eq(members.organisationId, organisationId),
        eq(members.subject, subject),
        or(ne(members.role, "owner"), byOwner ? anotherOwnerThan(organisationId, subject) : sql`0`),
      ),
    );
  return result.meta.changes > 0;
}
