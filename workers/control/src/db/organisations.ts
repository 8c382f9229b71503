import { and, eq } from "drizzle-orm";
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
