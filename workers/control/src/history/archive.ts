import { and, asc, eq, gt, isNull, lte, max, sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { events, historyArchiveCursor, historyArchives, publications } from "../db/schema.ts";

// History older than a window leaves D1 (docs/storage.md, "History archive"). Each scheduled run
// moves parts of passports' histories (their oldest events and publications) into KV values, in two
// steps, each safe to interrupt and to repeat:
//
// 1. write: the part is put in KV under a key naming its exact range (so a value never changes),
//    then recorded in `history_archives`; rows stay in D1 and readers keep reading them there;
// 2. seal: once KV's propagation bound has passed since, one batch marks the part sealed and deletes
//    exactly its rows from D1. Readers read sealed parts from KV and everything else from D1, so
//    each event is read from exactly one place, before, during and after a run.

const DAY = 86_400_000;

export const HISTORY_ARCHIVE = {
  /** Events and publications older than this may leave D1. */
  windowMs: 30 * DAY,
  /** KV's propagation bound (docs/freshness.md, `K`): a part is read from KV only this long after its write. */
  sealAfterMs: 60_000,
  /** Events per part: at most one page of the largest history page (`limit` 500) spans two parts. */
  partEvents: 500,
  /** Rows of `events` one run walks to find passports with old history. */
  scanRows: 2000,
  /** Passports one run archives a part of, and parts one run seals. */
  passportsPerRun: 50,
} as const;

type Limits = { [K in keyof typeof HISTORY_ARCHIVE]: number };

export type EventRow = typeof events.$inferSelect;
type PublicationRow = typeof publications.$inferSelect;

/** What one KV value of the archive holds. */
export interface ArchivedPart {
  identity_id: string;
  events: EventRow[];
  publications: PublicationRow[];
}

/** The KV key of a part: its passport and exact ranges, so a value, once written, never changes. */
function archiveKey(passportId: string, firstSeq: number, lastSeq: number, publicationsLastSeq: number) {
  const pad = (n: number) => String(n).padStart(12, "0");
  return `archive:${passportId}:${pad(firstSeq)}-${pad(lastSeq)}:${pad(publicationsLastSeq)}`;
}

/** The longest prefix of `rows` for which `keep` holds. */
function prefix<T>(rows: T[], keep: (row: T) => boolean): T[] {
  const end = rows.findIndex((row) => !keep(row));
  return end === -1 ? rows : rows.slice(0, end);
}

/**
 * The next part of a passport's history to archive, if any: the events after the last archived part,
 * in order, as long as each is older than `cutoff`, is not the passport's newest, and its version
 * is published (written to KV and logged); and the publications of those versions, except the
 * newest, that are written and logged. The newest event and publication stay, so a change, the
 * publication chain and the status route never need the archive.
 */
async function nextPart(db: Database, passportId: string, cutoff: string, limits: Limits) {
  const [[done], [newest], [newestPublished], [settled]] = await db.batch([
    db
      .select({ events: max(historyArchives.lastSeq), publications: max(historyArchives.publicationsLastSeq) })
      .from(historyArchives)
      .where(eq(historyArchives.passportId, passportId)),
    db
      .select({ event: max(events.seq) })
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
          sql`${publications.writtenAt} IS NOT NULL AND ${publications.logIndex} IS NOT NULL`,
        ),
      ),
  ]);
  const afterEvent = done?.events ?? 0;
  const afterPublication = done?.publications ?? 0;
  const newestEvent = newest?.event ?? 0;
  const settledVersion = settled?.version ?? 0;
  const [candidates, published] = await db.batch([
    db
      .select()
      .from(events)
      .where(and(eq(events.passportId, passportId), gt(events.seq, afterEvent)))
      .orderBy(asc(events.seq))
      .limit(limits.partEvents),
    db
      .select()
      .from(publications)
      .where(and(eq(publications.passportId, passportId), gt(publications.seq, afterPublication)))
      .orderBy(asc(publications.seq))
      .limit(limits.partEvents),
  ]);
  const partEvents = prefix(
    candidates,
    (e) => e.at < cutoff && e.seq < newestEvent && e.recordVersion <= settledVersion,
  );
  const lastVersion = partEvents.at(-1)?.recordVersion ?? 0;
  const newestPublication = newestPublished?.version ?? 0;
  const partPublications = prefix(
    published,
    (p) =>
      p.recordVersion <= lastVersion &&
      p.recordVersion < newestPublication &&
      p.writtenAt !== null &&
      p.logIndex !== null,
  );
  return { events: partEvents, publications: partPublications, afterPublication };
}

/** Step 1 for one passport: its next part put in KV and recorded (unsealed). Returns whether there was one. */
async function writePart(env: Env, db: Database, passportId: string, now: Date, limits: Limits) {
  const cutoff = new Date(now.getTime() - limits.windowMs).toISOString();
  const part = await nextPart(db, passportId, cutoff, limits);
  const first = part.events[0];
  const last = part.events.at(-1);
  if (!first || !last) return false;
  const publicationsLast = part.publications.at(-1)?.seq ?? part.afterPublication;
  const key = archiveKey(passportId, first.seq, last.seq, publicationsLast);
  const value: ArchivedPart = { identity_id: passportId, events: part.events, publications: part.publications };
  await env.SNAPSHOTS.put(key, JSON.stringify(value));
  // A run racing this one for the same passport starts its part at the same event: the first to
  // record it wins, and the other's KV value is never read.
  await db
    .insert(historyArchives)
    .values({
      passportId,
      firstSeq: first.seq,
      lastSeq: last.seq,
      publicationsFirstSeq: part.publications[0]?.seq ?? null,
      publicationsLastSeq: part.publications.at(-1)?.seq ?? null,
      key,
      writtenAt: now.toISOString(),
    })
    .onConflictDoNothing();
  return true;
}

/**
 * Step 2: each part written at least `sealAfterMs` ago is sealed and its rows deleted from D1, in one
 * batch per part (a transaction). Sealing again deletes nothing more: the part's rows are gone, and
 * rows written since have higher `seq`.
 */
async function sealParts(db: Database, now: Date, limits: Limits): Promise<number> {
  const due = await db
    .select()
    .from(historyArchives)
    .where(
      and(
        isNull(historyArchives.sealedAt),
        lte(historyArchives.writtenAt, new Date(now.getTime() - limits.sealAfterMs).toISOString()),
      ),
    )
    .orderBy(asc(historyArchives.writtenAt))
    .limit(limits.passportsPerRun);
  for (const part of due) {
    const inPart = (seq: typeof events.seq | typeof publications.seq, first: number, last: number) =>
      sql`${seq} BETWEEN ${first} AND ${last}`;
    await db.batch([
      db
        .update(historyArchives)
        .set({ sealedAt: now.toISOString() })
        .where(and(eq(historyArchives.passportId, part.passportId), eq(historyArchives.firstSeq, part.firstSeq))),
      db
        .delete(events)
        .where(and(eq(events.passportId, part.passportId), inPart(events.seq, part.firstSeq, part.lastSeq))),
      ...(part.publicationsFirstSeq !== null && part.publicationsLastSeq !== null
        ? [
            db
              .delete(publications)
              .where(
                and(
                  eq(publications.passportId, part.passportId),
                  inPart(publications.seq, part.publicationsFirstSeq, part.publicationsLastSeq),
                ),
              ),
          ]
        : []),
    ]);
  }
  return due.length;
}

/**
 * The passports whose history reaches back past `cutoff`, from where the last run stopped in
 * `events` (seq order), and where the next run goes on: back to the start once the walk meets the
 * window or the table's end.
 */
async function passportsToArchive(db: Database, cutoff: string, limits: Limits) {
  const [cursor] = await db.select().from(historyArchiveCursor).where(eq(historyArchiveCursor.id, 1));
  const after = cursor?.afterSeq ?? 0;
  const rows = await db
    .select({ seq: events.seq, passportId: events.passportId, at: events.at })
    .from(events)
    .where(gt(events.seq, after))
    .orderBy(asc(events.seq))
    .limit(limits.scanRows);
  const old = prefix(rows, (row) => row.at < cutoff);
  const passports = new Set<string>();
  for (const [i, row] of old.entries()) {
    if (!passports.has(row.passportId) && passports.size === limits.passportsPerRun) {
      // The next run goes on from the first row of a passport this one leaves.
      return { passports: [...passports], next: old[i - 1]?.seq ?? after };
    }
    passports.add(row.passportId);
  }
  const more = old.length === rows.length && rows.length === limits.scanRows;
  return { passports: [...passports], next: more ? (old.at(-1)?.seq ?? 0) : 0 };
}

/**
 * One scheduled run: seals what is due, then writes the next part of up to `passportsPerRun`
 * passports' old history. Returns what it did.
 */
export async function archiveHistory(
  env: Env,
  db: Database,
  now = new Date(),
  limits: Limits = HISTORY_ARCHIVE,
): Promise<{ sealed: number; written: number }> {
  const sealed = await sealParts(db, now, limits);
  const cutoff = new Date(now.getTime() - limits.windowMs).toISOString();
  const { passports, next } = await passportsToArchive(db, cutoff, limits);
  let written = 0;
  for (const passportId of passports) if (await writePart(env, db, passportId, now, limits)) written++;
  await db
    .insert(historyArchiveCursor)
    .values({ id: 1, afterSeq: next })
    .onConflictDoUpdate({ target: historyArchiveCursor.id, set: { afterSeq: next } });
  return { sealed, written };
}
