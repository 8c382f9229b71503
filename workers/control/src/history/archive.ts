import type { Database } from "../db/client.ts";
import {
  archiveProgress,
  type EventRow,
  eventsFromCursor,
  type PublicationRow,
  partsToSeal,
  recordPart,
  rowsAfter,
  sealPart,
  setArchiveCursor,
} from "../db/history-archive.ts";

// History older than a window leaves D1 (docs/storage.md, "History archive"). Each scheduled run
// moves parts of passports' histories (their oldest events and publications) into KV values, in two
// steps, each safe to interrupt and to repeat:
//
// 1. write: the part is put in KV under a key naming its exact ranges (so a value never changes),
//    then recorded in `history_archives`; its rows stay in D1 and readers keep reading them there;
// 2. seal: once KV's propagation bound has passed since, one batch marks the part sealed and deletes
//    exactly its rows from D1. Readers read sealed parts from KV and everything else from D1, so
//    each event is read from exactly one place, before, during and after a run.

const DAY = 86_400_000;

export const HISTORY_ARCHIVE = {
  /** Events and publications older than this may leave D1 (the size this keeps: docs/storage.md). */
  windowMs: 7 * DAY,
  /** KV's propagation bound (docs/freshness.md, `K`): a part is read from KV only this long after its write. */
  sealAfterMs: 60_000,
  /** Events per part: a page of the largest history page (`limit` 500) spans at most two parts. */
  partEvents: 500,
  /** Rows of `events` one run walks to find passports with old history. */
  scanRows: 5000,
  /**
   * Passports one run archives a part of, and parts one run seals: about three D1 round trips and
   * one KV write each, so a run stays within seconds (the pass's pace: docs/storage.md).
   */
  passportsPerRun: 200,
} as const;

type Limits = { [K in keyof typeof HISTORY_ARCHIVE]: number };

/** What one KV value of the archive holds: the rows as D1 held them. */
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
 * The next part of a passport's history to archive: the events after its last part, in order, as
 * long as each is older than `cutoff`, is not the passport's newest, and its version is published
 * (written to KV and logged); and the publications of those versions, except the newest, that are
 * written and logged. The newest event and publication stay, so a change, the publication chain
 * and the status route never need the archive.
 */
async function nextPart(db: Database, passportId: string, cutoff: string, limits: Limits) {
  const progress = await archiveProgress(db, passportId);
  const after = { event: progress.afterEvent, publication: progress.afterPublication };
  const rows = await rowsAfter(db, passportId, after, limits.partEvents);
  const partEvents = prefix(
    rows.events,
    (e) => e.at < cutoff && e.seq < progress.newestEvent && e.recordVersion <= progress.settledVersion,
  );
  const lastVersion = partEvents.at(-1)?.recordVersion ?? 0;
  const partPublications = prefix(
    rows.publications,
    (p) =>
      p.recordVersion <= lastVersion &&
      p.recordVersion < progress.newestVersion &&
      p.writtenAt !== null &&
      p.logIndex !== null,
  );
  return { events: partEvents, publications: partPublications, afterPublication: progress.afterPublication };
}

/** Step 1 for one passport: its next part put in KV and recorded (unsealed). Returns whether there was one. */
async function writePart(env: Env, db: Database, passportId: string, now: Date, limits: Limits) {
  const cutoff = new Date(now.getTime() - limits.windowMs).toISOString();
  const part = await nextPart(db, passportId, cutoff, limits);
  const first = part.events[0];
  const last = part.events.at(-1);
  if (!first || !last) return false;
  const key = archiveKey(passportId, first.seq, last.seq, part.publications.at(-1)?.seq ?? part.afterPublication);
  const value: ArchivedPart = { identity_id: passportId, events: part.events, publications: part.publications };
  await env.SNAPSHOTS.put(key, JSON.stringify(value));
  // A run racing this one for the same passport starts its part at the same event: the first to
  // record it wins, and the other's KV value is never read.
  await recordPart(db, {
    passportId,
    firstSeq: first.seq,
    lastSeq: last.seq,
    publicationsFirstSeq: part.publications[0]?.seq ?? null,
    publicationsLastSeq: part.publications.at(-1)?.seq ?? null,
    key,
    writtenAt: now.toISOString(),
  });
  return true;
}

/**
 * The passports whose history reaches back past `cutoff`, walking `events` in `seq` order from
 * where the last run stopped, and where the next run goes on: from the first row of a passport this
 * run leaves, or back at the start once the walk meets the window or the table's end.
 */
async function passportsToArchive(db: Database, cutoff: string, limits: Limits) {
  const { after, rows } = await eventsFromCursor(db, limits.scanRows);
  const old = prefix(rows, (row) => row.at < cutoff);
  const passports = new Set<string>();
  for (const [i, row] of old.entries()) {
    if (!passports.has(row.passportId) && passports.size === limits.passportsPerRun) {
      return { passports: [...passports], next: old[i - 1]?.seq ?? after };
    }
    passports.add(row.passportId);
  }
  const more = old.length === rows.length && rows.length === limits.scanRows;
  return { passports: [...passports], next: more ? (old.at(-1)?.seq ?? 0) : 0 };
}

/**
 * The shard whose history the run at `at` archives: each in turn, one a minute. A run uses most of
 * what one invocation may ask of D1 (1,000 queries: `passportsPerRun` passports at about three
 * round trips each, and as many seals), so the cron cannot run it for every shard at once; each
 * shard's pace is then `passportsPerRun` every `count` minutes, for its share of the passports.
 */
export function archiveShardAt(at: Date, count: number): number {
  return Math.floor(at.getTime() / 60_000) % count;
}

/**
 * One scheduled run on one shard: seals the parts written at least `sealAfterMs` ago (step 2), then writes the
 * next part of up to `passportsPerRun` passports' old history (step 1). Returns what it did.
 */
export async function archiveHistory(
  env: Env,
  db: Database,
  now = new Date(),
  limits: Limits = HISTORY_ARCHIVE,
): Promise<{ sealed: number; written: number }> {
  const due = await partsToSeal(db, new Date(now.getTime() - limits.sealAfterMs).toISOString(), limits.passportsPerRun);
  for (const part of due) await sealPart(db, part, now.toISOString());
  const cutoff = new Date(now.getTime() - limits.windowMs).toISOString();
  const { passports, next } = await passportsToArchive(db, cutoff, limits);
  let written = 0;
  for (const passportId of passports) if (await writePart(env, db, passportId, now, limits)) written++;
  await setArchiveCursor(db, next);
  return { sealed: due.length, written };
}
