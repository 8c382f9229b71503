import { and, asc, count, eq, gt, inArray, or, type Placeholder, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { type Database, isConstraintError } from "./client.ts";
import { acrossShards } from "./fan-out.ts";
import { organisations, passports, passportUses } from "./schema.ts";
import type { Shards } from "./shards.ts";

// Agent uses links (docs/reciprocal-trust.md): the API and MCP passports an agent passport declares
// it calls. Writes are statements of the agent's change (its next record version); the target's
// row and record are never touched. The limit per agent is held by migration 0020's trigger.

/** Lifecycles that flag a link: the passport at its other end may not be relied on. */
export const FLAGGED_LIFECYCLES = ["revoked", "retired"] as const;

/**
 * The agent's links with what the Dashboard shows of each target, oldest first (an aggregate read).
 * A target in another shard has no row here to join: its name and lifecycle are null, and
 * `withUseTargets` reads them from its own shard.
 */
export function usesOfQuery(db: Database, agentId: string | Placeholder) {
  return db
    .select({
      targetId: passportUses.targetId,
      targetFamily: passportUses.targetFamily,
      declaredAt: passportUses.declaredAt,
      targetName: passports.displayName,
      targetLifecycle: passports.lifecycle,
    })
    .from(passportUses)
    .leftJoin(passports, eq(passports.id, passportUses.targetId))
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
async function declarerCounts(db: Database, targetId: string): Promise<{ total: number; flagged: number }> {
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
async function declarersOf(
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

// The agents that declare a passport may be of any organisation, in any shard (the link is a row
// of the agent's shard): the declared-by answers ask every shard at once and merge.

/** `declarerCounts` over every shard. */
export async function declarerCountsEverywhere(shards: Shards, targetId: string) {
  const counts = await acrossShards(shards, (db) => declarerCounts(db, targetId));
  return counts.reduce((sum, c) => ({ total: sum.total + c.total, flagged: sum.flagged + c.flagged }), {
    total: 0,
    flagged: 0,
  });
}

type Declarer = Awaited<ReturnType<typeof declarersOf>>[number];

const byDeclaration = (a: Declarer, b: Declarer) =>
  a.declaredAt < b.declaredAt
    ? -1
    : a.declaredAt > b.declaredAt
      ? 1
      : a.agentId < b.agentId
        ? -1
        : a.agentId > b.agentId
          ? 1
          : 0;

/**
 * `declarersOf` over every shard: a page from each, merged in (declared_at, agent id) order, a key
 * every shard shares, and cut to the limit.
 */
export async function declarersEverywhere(
  shards: Shards,
  targetId: string,
  page: { after?: { declaredAt: string; agentId: string }; limit: number },
) {
  const pages = await acrossShards(shards, (db) => declarersOf(db, targetId, page));
  return pages.flat().sort(byDeclaration).slice(0, page.limit);
}

type UseRow = Awaited<ReturnType<typeof usesOfQuery>>[number];

/**
 * An aggregate's uses links with the name and lifecycle of targets in other shards filled in:
 * `usesOfQuery` joins only the agent's own shard. One read per other target, all at once.
 */
export async function withUseTargets<S extends { uses: UseRow[] }>(shards: Shards, stored: S): Promise<S> {
  if (stored.uses.every((use) => use.targetLifecycle !== null)) return stored;
  const uses = await Promise.all(
    stored.uses.map(async (use) => {
      if (use.targetLifecycle !== null) return use;
      const [target] = await (await shards.readIdentity(use.targetId))
        .select({ displayName: passports.displayName, lifecycle: passports.lifecycle })
        .from(passports)
        .where(eq(passports.id, use.targetId));
      return target ? { ...use, targetName: target.displayName, targetLifecycle: target.lifecycle } : use;
    }),
  );
  return { ...stored, uses };
}
