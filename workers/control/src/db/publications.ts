import { and, asc, desc, eq, gt, isNull, lte } from "drizzle-orm";
import type { Database } from "./client.ts";
import { events, publications } from "./schema.ts";

export type PublicationRow = typeof publications.$inferSelect;

/** The newest publication of a passport, if it was ever published. */
export async function lastPublication(db: Database, passportId: string): Promise<PublicationRow | undefined> {
  const [row] = await db
    .select()
    .from(publications)
    .where(eq(publications.passportId, passportId))
    .orderBy(desc(publications.recordVersion))
    .limit(1);
  return row;
}

/** Kinds of the changes made after version `after` up to and including version `upTo`. */
export async function changeKindsBetween(db: Database, passportId: string, after: number, upTo: number) {
  const rows = await db
    .select({ kind: events.kind })
    .from(events)
    .where(and(eq(events.passportId, passportId), gt(events.recordVersion, after), lte(events.recordVersion, upTo)))
    .orderBy(events.recordVersion);
  return [...new Set(rows.map((row) => row.kind))];
}

/**
 * Records a publication once; a retry of the same version returns the row written first. A second
 * version chaining to the same predecessor (a fork) fails on `publications_passport_previous`.
 */
export async function recordPublication(
  db: Database,
  row: Omit<PublicationRow, "seq" | "writtenAt" | "logIndex">,
): Promise<PublicationRow> {
  await db
    .insert(publications)
    .values(row)
    .onConflictDoNothing({ target: [publications.passportId, publications.recordVersion] });
  const [stored] = await db
    .select()
    .from(publications)
    .where(and(eq(publications.passportId, row.passportId), eq(publications.recordVersion, row.recordVersion)));
  if (!stored) throw new Error("publication row vanished");
  return stored;
}

/** Records that a publication's history and feed entries are in KV. */
export async function markWritten(db: Database, seq: number, at: string): Promise<void> {
  await db.update(publications).set({ writtenAt: at }).where(eq(publications.seq, seq));
}

/** Records a publication's transparency-log index (the same index on every retry). */
export async function setLogIndex(db: Database, seq: number, logIndex: number): Promise<void> {
  await db.update(publications).set({ logIndex }).where(eq(publications.seq, seq));
}

/** Publications not yet in the transparency log, in publication order (`publications_unlogged`). */
export function unloggedPublications(db: Database, limit: number): Promise<PublicationRow[]> {
  return db
    .select()
    .from(publications)
    .where(isNull(publications.logIndex))
    .orderBy(asc(publications.seq))
    .limit(limit);
}
