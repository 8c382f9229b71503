import { and, asc, count, eq, gt, inArray, or, type Placeholder, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { type Database, isConstraintError } from "./client.ts";
import { organisations, passports, passportUses } from "./schema.ts";

// Agent uses links (docs/reciprocal-trust.md): the API and MCP passports an agent passport declares
// it calls. Writes are statements of the agent's change (its next record version); the target's
// row and record are never touched. The limit per agent is held by migration 0020's trigger.

/** Lifecycles that flag a link: the passport at its other end may not be relied on. */
export const FLAGGED_LIFECYCLES = ["revoked", "retired"] as const;

/** The agent's links with what the Dashboard shows of each target, oldest first (an aggregate read). */
export function usesOfQuery(db: Database, agentId: string | Placeholder) {
  return db
    .select({
      targetId: passportUses.targetId,
      targetFamily: passports.family,
      declaredAt: passportUses.declaredAt,
      targetName: passports.displayName,
      targetLifecycle: passports.lifecycle,
    })
    .from(passportUses)
    .innerJoin(passports, eq(passports.id, passportUses.targetId))
    .where(eq(passportUses.agentId, agentId))
    .orderBy(asc(passportUses.declaredAt), asc(passportUses.targetId));
}

/** The link from `agentId` to `targetId`, if declared. */
export async function useOf(db: Database, agentId: string, targetId: string) {
  const [link] = await db
    .select()
    .from(passportUses)
    .where(and(eq(passportUses.agentId, agentId), eq(passportUses.targetId, targetId)));
  return link;
}

export function insertUse(db: Database, row: typeof passportUses.$inferInsert) {
  return db.insert(passportUses).values(row);
}

export function deleteUse(db: Database, agentId: string, targetId: string) {
  return db.delete(passportUses).where(and(eq(passportUses.agentId, agentId), eq(passportUses.targetId, targetId)));
}

/** Whether a write was stopped by the links-per-agent limit (migration 0020's trigger). */
export function isUsesLimitViolation(error: unknown): boolean {
  return isConstraintError(error, "passport_uses_limit");
}

/** How many agent passports declare `targetId`, and how many of them are revoked or retired. */
export async function declarerCounts(db: Database, targetId: string): Promise<{ total: number; flagged: number }> {
  const [row] = await db
    .select({
      total: count(),
      flagged: sql<number>`coalesce(sum(${inArray(passports.lifecycle, FLAGGED_LIFECYCLES)}), 0)`,
    })
    .from(passportUses)
    .innerJoin(passports, eq(passports.id, passportUses.agentId))
    .where(eq(passportUses.targetId, targetId));
  return { total: row?.total ?? 0, flagged: Number(row?.flagged ?? 0) };
}

/** One page of the agent passports that declare `targetId`, in declaration order, after a cursor. */
export async function declarersOf(
  db: Database,
  targetId: string,
  page: { after?: { declaredAt: string; agentId: string }; limit: number },
) {
  const responsible = alias(organisations, "responsible");
  const after = page.after;
  return db
    .select({
      agentId: passportUses.agentId,
      declaredAt: passportUses.declaredAt,
      displayName: passports.displayName,
      lifecycle: passports.lifecycle,
      organisationId: responsible.id,
      organisationName: responsible.name,
    })
    .from(passportUses)
    .innerJoin(passports, eq(passports.id, passportUses.agentId))
    .innerJoin(responsible, eq(responsible.id, passports.organisationId))
    .where(
      and(
        eq(passportUses.targetId, targetId),
        after
          ? or(
              gt(passportUses.declaredAt, after.declaredAt),
              and(eq(passportUses.declaredAt, after.declaredAt), gt(passportUses.agentId, after.agentId)),
            )
          : undefined,
      ),
    )
    .orderBy(asc(passportUses.declaredAt), asc(passportUses.agentId))
    .limit(page.limit);
}
