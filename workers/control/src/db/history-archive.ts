import { and, asc, eq, gt, isNotNull, isNull, lte, max, sql } from "drizzle-orm";
import type { Database } from "./client.ts";
import { historyOf } from "./passports.ts";
import { events, historyArchiveCursor, historyArchives, publications } from "./schema.ts";

// The queries of the history archive (docs/storage.md, "History archive"); the pass that moves
// parts to KV is history/archive.ts, the reader history/pages.ts.

export type EventRow = typeof events.$inferSelect;
export type PublicationRow = typeof publications.$inferSelect;
export type ArchivedPartRow = typeof historyArchives.$inferSelect;

/**
 * Where a passport's archive stands, in one round trip: the last event and publication already in
 * a part, its newest event, its newest publication, and its newest publication written to KV and
 * in the transparency log.
 */
export async function archiveProgress(db: Database, passportId: string) {
  const [[done], [newest], [newestPublished], [settled]] = await db.batch([
    db
      .select({ events: max(historyArchives.lastSeq), publications: max(historyArchives.publicationsLastSeq) })
      .from(historyArchives)
      .where(eq(historyArchives.passportId, passportId)),
    db
      .select({ seq: max(events.seq) })
      .from(events)
      .where(eq(events.passportId, passportId)),
    db
      .select({ version: max(publications.recordVersion) })
      .from(publications)
      .where(eq(publications.passportId, passportId)),
    db
      .select({ version: max(publications.recordVersion) })
      .from(publications)
      .where(
        and(
          eq(publications.passportId, passportId),
          isNotNull(publications.writtenAt),
          isNotNull(publications.logIndex),
        ),
      ),
  ]);
  return {
    afterEvent: done?.events ?? 0,
    afterPublication: done?.publications ?? 0,
    newestEvent: newest?.seq ?? 0,
    newestVersion: newestPublished?.version ?? 0,
    settledVersion: settled?.version ?? 0,
  };
}

/** A passport's events and publications after the given `seq`s, oldest first, `limit` of each, in one round trip. */
export async function rowsAfter(
  db: Database,
  passportId: string,
  after: { event: number; publication: number },
  limit: number,
): Promise<{ events: EventRow[]; publications: PublicationRow[] }> {
  const [eventRows, publicationRows] = await db.batch([
    historyOf(db, passportId, after.event, limit),
    db
      .select()
      .from(publications)
      .where(and(eq(publications.passportId, passportId), gt(publications.seq, after.publication)))
      .orderBy(asc(publications.seq))
      .limit(limit),
  ]);
  return { events: eventRows, publications: publicationRows };
}

/** Records a part written to KV, unsealed; a part already recorded from the same first event is kept. */
export async function recordPart(db: Database, part: Omit<ArchivedPartRow, "sealedAt">) {
  await db.insert(historyArchives).values(part).onConflictDoNothing();
}

/** Unsealed parts written at or before `writtenBy`, oldest first (`history_archives_unsealed`). */
export function partsToSeal(db: Database, writtenBy: string, limit: number): Promise<ArchivedPartRow[]> {
  return db
    .select()
    .from(historyArchives)
    .where(and(isNull(historyArchives.sealedAt), lte(historyArchives.writtenAt, writtenBy)))
    .orderBy(asc(historyArchives.writtenAt))
    .limit(limit);
}

/**
 * Seals a part and deletes exactly its rows from D1, in one batch (a transaction). Sealing again
 * deletes nothing more: the part's rows are gone, and rows written since have higher `seq`.
 */
export async function sealPart(db: Database, part: ArchivedPartRow, at: string) {
  const { passportId, firstSeq, lastSeq, publicationsFirstSeq, publicationsLastSeq } = part;
  await db.batch([
    db
      .update(historyArchives)
      .set({ sealedAt: at })
      .where(and(eq(historyArchives.passportId, passportId), eq(historyArchives.firstSeq, firstSeq))),
    db
      .delete(events)
      .where(and(eq(events.passportId, passportId), sql`${events.seq} BETWEEN ${firstSeq} AND ${lastSeq}`)),
    ...(publicationsFirstSeq !== null && publicationsLastSeq !== null
      ? [
          db
            .delete(publications)
            .where(
              and(
                eq(publications.passportId, passportId),
                sql`${publications.seq} BETWEEN ${publicationsFirstSeq} AND ${publicationsLastSeq}`,
              ),
            ),
        ]
      : []),
  ]);
}

/** Where the archiving pass goes on in `events` (0 at first), and the `limit` events after it, in one round trip. */
export async function eventsFromCursor(db: Database, limit: number) {
  const [[cursor], rows] = await db.batch([
    db.select().from(historyArchiveCursor).where(eq(historyArchiveCursor.id, 1)),
    db
      .select({ seq: events.seq, passportId: events.passportId, at: events.at })
      .from(events)
      .where(
        gt(
          events.seq,
          sql`coalesce((select ${historyArchiveCursor.afterSeq} from ${historyArchiveCursor} where ${historyArchiveCursor.id} = 1), 0)`,
        ),
      )
      .orderBy(asc(events.seq))
      .limit(limit),
  ]);
  return { after: cursor?.afterSeq ?? 0, rows };
}

export async function setArchiveCursor(db: Database, afterSeq: number) {
  await db
    .insert(historyArchiveCursor)
    .values({ id: 1, afterSeq })
    .onConflictDoUpdate({ target: historyArchiveCursor.id, set: { afterSeq } });
}

/**
 * A page's reads, in one round trip: the passport's sealed parts that reach past `afterSeq`, in
 * order, and its events in D1 after it (`count` of each at most).
 */
export async function historyPageReads(db: Database, passportId: string, afterSeq: number, count: number) {
  const [parts, recent] = await db.batch([
    db
      .select({ key: historyArchives.key, firstSeq: historyArchives.firstSeq })
      .from(historyArchives)
      .where(
        and(
          eq(historyArchives.passportId, passportId),
          isNotNull(historyArchives.sealedAt),
          gt(historyArchives.lastSeq, afterSeq),
        ),
      )
      .orderBy(asc(historyArchives.firstSeq))
      .limit(count),
    historyOf(db, passportId, afterSeq, count),
  ]);
  return { parts, recent };
}
