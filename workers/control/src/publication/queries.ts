import { and, asc, desc, eq, gt, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client.ts";
import { batchThen, preparedStatements } from "../db/prepared.ts";
import { events, outbox, passports, publications, publishedManifests } from "../db/schema.ts";
import type { CurrentState } from "./status.ts";

export type PublicationRow = typeof publications.$inferSelect;

/**
 * What a publication reads besides the passport's aggregate (`loadAggregateWith`): the newest
 * publication, the kinds of the changes made after it, and the manifest-index keys published.
 * Keyed by the identity id alone (the placeholder `id`), so they share the aggregate's round trip;
 * built once per database, like the aggregate's reads.
 */
export const publicationReads = preparedStatements((db) => {
  const passportId = sql.placeholder("id");
  const lastVersion = sql`coalesce((select max(${publications.recordVersion}) from ${publications} where ${publications.passportId} = ${passportId}), 0)`;
  return [
    db
      .select()
      .from(publications)
      .where(eq(publications.passportId, passportId))
      .orderBy(desc(publications.recordVersion))
      .limit(1),
    db
      .select({ kind: events.kind })
      .from(events)
      .where(and(eq(events.passportId, passportId), gt(events.recordVersion, lastVersion)))
      .orderBy(events.recordVersion),
    db
      .select({ key: publishedManifests.manifestKey })
      .from(publishedManifests)
      .where(eq(publishedManifests.passportId, passportId)),
  ] as const;
});

const publicationRecord = preparedStatements((db) => {
  const value = (name: string) => sql.placeholder(name);
  return [
    db
      .insert(publications)
      .values({
        passportId: value("passportId"),
        recordVersion: value("recordVersion"),
        digest: value("digest"),
        previousDigest: value("previousDigest"),
        publishedAt: value("publishedAt"),
        changeKinds: value("changeKinds"),
      })
      .onConflictDoNothing({ target: [publications.passportId, publications.recordVersion] }),
    db
      .select()
      .from(publications)
      .where(
        and(eq(publications.passportId, value("passportId")), eq(publications.recordVersion, value("recordVersion"))),
      ),
  ] as const;
});

/**
 * Records a publication once, in one round trip; a retry of the same version returns the row
 * written first. A second version chaining to the same predecessor (a fork) fails on
 * `publications_passport_previous`.
 */
export async function recordPublication(
  db: Database,
  row: Omit<PublicationRow, "seq" | "writtenAt" | "logIndex">,
): Promise<PublicationRow> {
  const [, [stored]] = publicationRecord.map(db, await db.$client.batch(publicationRecord.bind(db, row)));
  if (!stored) throw new Error("publication row vanished");
  return stored;
}

/** The statement that records a publication's history and feed entries are in KV. */
export function markWritten(db: Database, seq: number, at: string) {
  return db.update(publications).set({ writtenAt: at }).where(eq(publications.seq, seq));
}

/** The statement that records a publication's transparency-log index (the same index on every retry). */
export function setLogIndex(db: Database, seq: number, logIndex: number) {
  return db.update(publications).set({ logIndex }).where(eq(publications.seq, seq));
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

const publicationWritten = preparedStatements((db) => [
  db
    .update(publications)
    .set({ writtenAt: sql`${sql.placeholder("at")}`, logIndex: sql`${sql.placeholder("logIndex")}` })
    .where(eq(publications.seq, sql.placeholder("seq"))),
  db
    .delete(outbox)
    .where(
      and(
        eq(outbox.passportId, sql.placeholder("passportId")),
        lte(outbox.recordVersion, sql.placeholder("recordVersion")),
      ),
    ),
]);

/**
 * Records a written publication in one round trip: written with its log index, the manifest-index
 * changes (`manifestKeyStatement`), and the passport's outbox row cleared up to `version`.
 */
export async function recordWritten(
  db: Database,
  publication: PublicationRow,
  logIndex: number,
  indexChanges: BatchItem<"sqlite">[],
  at: string,
) {
  const { seq, passportId, recordVersion } = publication;
  await batchThen(db, indexChanges, publicationWritten.bind(db, { at, logIndex, seq, passportId, recordVersion }));
}

/** The statement that records a manifest-index key as written (`added`) or as removed. */
export function manifestKeyStatement(db: Database, passportId: string, key: string, added: boolean) {
  return added
    ? db.insert(publishedManifests).values({ passportId, manifestKey: key }).onConflictDoNothing()
    : db
        .delete(publishedManifests)
        .where(and(eq(publishedManifests.passportId, passportId), eq(publishedManifests.manifestKey, key)));
}

/** Outbox rows due by `now`, oldest first, rows owed only because an organisation changed (`bulk`) last. */
export async function dueOutboxRows(db: Database, now: string, limit: number) {
  return db
    .select()
    .from(outbox)
    .where(lte(outbox.nextAttemptAt, now))
    .orderBy(asc(outbox.bulk), asc(outbox.nextAttemptAt))
    .limit(limit);
}

/** Records a failed publication attempt on the passport's outbox row with when to try again. */
export async function deferOutboxRow(
  db: Database,
  passportId: string,
  failure: { attempts: number; nextAttemptAt: string; error: string },
) {
  await db
    .update(outbox)
    .set({ attempts: failure.attempts, nextAttemptAt: failure.nextAttemptAt, lastError: failure.error.slice(0, 500) })
    .where(eq(outbox.passportId, passportId));
}

/** Records the log indexes an append gave publications, in one batch. */
export async function setLogIndexes(db: Database, entries: { seq: number; index: number }[]) {
  const [first, ...rest] = entries.map(({ seq, index }) => setLogIndex(db, seq, index));
  if (first) await db.batch([first, ...rest]);
}

/**
 * Reads a passport's current state from D1, the source of truth (its shard), in one round trip: its committed
 * lifecycle and version, the newest publication confirmed written to KV, and its outbox row, if
 * any (docs/freshness.md, Status token). A passport is `pending` exactly while it has an outbox row.
 */
export async function readCurrentState(orm: Database, identityId: string): Promise<CurrentState> {
  const [[passport], [published], [owed]] = await orm.batch([
    orm
      .select({
        family: passports.family,
        lifecycle: passports.lifecycle,
        availability: passports.availability,
        recordVersion: passports.recordVersion,
      })
      .from(passports)
      .where(eq(passports.id, identityId)),
    orm
      .select({ recordVersion: publications.recordVersion, digest: publications.digest })
      .from(publications)
      .where(and(eq(publications.passportId, identityId), isNotNull(publications.writtenAt)))
      .orderBy(desc(publications.recordVersion))
      .limit(1),
    orm.select({ nextAttemptAt: outbox.nextAttemptAt }).from(outbox).where(eq(outbox.passportId, identityId)),
  ]);
  if (!passport) return { found: false };
  return {
    found: true,
    identity_id: identityId,
    family: passport.family,
    lifecycle: passport.lifecycle,
    ...(passport.availability ? { availability: passport.availability } : {}),
    publication: owed ? "pending" : "published",
    ...(published ? { record_version: published.recordVersion, digest: published.digest } : {}),
    ...(owed ? { pending_version: passport.recordVersion, next_attempt_at: owed.nextAttemptAt } : {}),
  };
}
