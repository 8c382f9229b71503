import { and, eq, ne, or, sql } from "drizzle-orm";
import type { Database } from "./client.ts";
import { members, organisations } from "./schema.ts";

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

/** Development only: makes sure the organisation and membership a development token names exist. */
export async function ensureDevelopmentMembership(
  db: Database,
  subject: string,
  organisationId: string,
  role: Role,
): Promise<void> {
  await db.batch([
    db.insert(organisations).values({ id: organisationId, name: organisationId }).onConflictDoNothing(),
    db
      .insert(members)
      .values({ organisationId, subject, role })
      .onConflictDoUpdate({ target: [members.organisationId, members.subject], set: { role } }),
  ]);
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

export function putMember(db: Database, organisationId: string, subject: string, role: Role) {
  return db
    .insert(members)
    .values({ organisationId, subject, role })
    .onConflictDoUpdate({ target: [members.organisationId, members.subject], set: { role } });
}

/**
 * Removes a member unless that would leave the organisation without an owner. The rule is part of
 * the one DELETE statement, so two owners removing each other at the same moment cannot both
 * succeed. Resolves to whether the member was removed.
 */
export async function removeMember(db: Database, organisationId: string, subject: string): Promise<boolean> {
  const anotherOwner = sql`EXISTS (SELECT 1 FROM members AS other WHERE other.organisation_id = ${organisationId} AND other.role = 'owner' AND other.subject <> ${subject})`;
  const result = await db
    .delete(members)
    .where(
      and(
        eq(members.organisationId, organisationId),
        eq(members.subject, subject),
        or(ne(members.role, "owner"), anotherOwner),
      ),
    );
  return result.meta.changes > 0;
}
