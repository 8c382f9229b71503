import {
  canonicalBytes,
  type FeedEntry,
  feedKey,
  feedSeqOf,
  type HistoryEntry,
  historyKey,
  manifestIndexPrefix,
  PassportRecord,
  projectPublicRecord,
  type SnapshotMetadata,
  sealRecord,
  snapshotKey,
  unwrap,
} from "@passport/domain";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client.ts";
import { loadAggregateWith } from "../db/passports.ts";
import { onEveryShard } from "../db/shard-tasks.ts";
import { shardsOf } from "../db/shards.ts";
import { announcePublication } from "./announce.ts";
import { logIndexOf, logPublication } from "./log/append.ts";
import { requestPurges } from "./purge-budget.ts";
import {
  deferOutboxRow,
  dueOutboxRows,
  manifestKeyStatement,
  markWritten,
  type PublicationRow,
  publicationReads,
  recordPublication,
  recordWritten,
} from "./queries.ts";
import { signDetached } from "./signing.ts";

export type PublishEnv = Env & { SIGNING_KEY?: string; LOG_SIGNING_KEY?: string };

/**
 * Publishes a passport through its sequencer (docs/publication.md): one Durable Object per
 * passport runs one publication at a time, so a slower publisher can never write an older snapshot
 * over a newer one, and two versions never chain to the same predecessor.
 */
export async function publishPassport(env: PublishEnv, identityId: string): Promise<PassportRecord> {
  const record = unwrap(await env.PUBLICATION_SEQUENCER.getByName(identityId).publish(identityId));
  return record as PassportRecord;
}

/**
 * Projects a passport's public record from D1, links it to the previously published version,
 * signs it, appends it to the transparency log (once per version), writes the snapshot with its log
 * index, its history entry and its feed entry to KV, then records it written and clears the
 * passport's outbox row: the publication is complete. Last, it hands the identity's edge purges to
 * the purge keeper, which never fails the publication. If any step before that fails the row stays
 * and the scheduled drain tries again, so the resolver converges on what D1 holds. Publishing
 * the same version again reproduces the same record (same time, same previous digest).
 *
 * Only the passport's PublicationSequencer may call this, one call at a time: it reads the newest
 * version from D1 and writes KV without any condition, which is safe only when nothing else
 * publishes the same passport meanwhile.
 */
export async function writePublication(env: PublishEnv, identityId: string): Promise<PassportRecord> {
  // The passport's organisation's shard holds its rows; refused while that organisation moves,
  // and the outbox row (in the shard it moves from, or copied to the new one) is drained later.
  const db = await shardsOf(env).forIdentity(identityId);
  // One round trip: the aggregate, the newest publication, the change kinds since it and the
  // manifest keys already published, all from the same snapshot.
  const [aggregate, [[last], kindsSinceLast, published]] = await loadAggregateWith(db, identityId, publicationReads, {
    id: identityId,
  });
  if (!aggregate) throw new Error(`cannot publish unknown passport ${identityId}`);
  const version = aggregate.passport.recordVersion;
  if (last && last.recordVersion > version) {
    throw new Error(`read version ${version} of ${identityId} after version ${last.recordVersion} was published`);
  }
  const republish = last?.recordVersion === version;
  if (last && !republish) {
    // The previous version's log entry comes before this one's, and its feed position is its log index.
    const lastIndex = await logPublication(env, db, last);
    // The new version chains to `last`; if last's entries never reached KV (its publication failed
    // before the next change), write them first, or the published history would have a gap.
    if (!last.writtenAt) {
      await putHistoryAndFeed(env, last, lastIndex);
      await markWritten(db, last.seq, new Date().toISOString());
    }
  }
  const previousDigest = republish ? (last.previousDigest ?? undefined) : last?.digest;
  const publishedAt = republish ? last.publishedAt : new Date().toISOString();
  const record = PassportRecord.parse(await sealRecord(projectPublicRecord(aggregate, publishedAt, previousDigest)));
  const publication = await recordPublication(db, {
    passportId: identityId,
    recordVersion: version,
    digest: record.digest,
    previousDigest: previousDigest ?? null,
    publishedAt,
    changeKinds: republish ? (last?.changeKinds ?? []) : [...new Set(kindsSinceLast.map((row) => row.kind))],
  });
  const signature = await signDetached(env.SIGNING_KEY, canonicalBytes(record));
  // Before the snapshot: a record is never served without its entry in the log.
  const logIndex = await logIndexOf(env, publication);
  const metadata: SnapshotMetadata = {
    digest: record.digest,
    record_version: version,
    signature,
    log_index: logIndex,
  };
  await env.SNAPSHOTS.put(snapshotKey(identityId), JSON.stringify(record), { metadata });
  await putHistoryAndFeed(env, publication, logIndex);
  const indexChanges = await syncManifestIndex(env, db, record, published);
  // Subscribers are told (docs/events.md) before the publication counts as written, so a failed
  // announcement is retried with it; a version already written before (a republish) is not
  // announced again.
  if (!(republish && last?.writtenAt)) await announcePublication(env, publication);
  // One round trip: the log index and the entries are recorded, the manifest keys as published, and
  // the outbox row cleared. Should it fail, the retry writes the same entries and keys again, and
  // the log answers the same index.
  await recordWritten(db, publication, logIndex, indexChanges, new Date().toISOString());
  // Published. The edge's purge is an acceleration within a budget shared by every publication
  // (docs/freshness.md, Purges): handed to the purge keeper, never awaited on the budget, never thrown.
  await requestPurges(env, identityId, publication.changeKinds);
  return record;
}

/**
 * Writes the signed history entry and the feed entry of one publication (docs/signing.md). The feed
 * entry's position is the publication's log index (`feedSeqOf`), not its shard's `publications.seq`:
 * every shard numbers its publications from 1, the log numbers the whole service's once.
 */
async function putHistoryAndFeed(env: PublishEnv, publication: PublicationRow, logIndex: number): Promise<void> {
  const entry: HistoryEntry = {
    identity_id: publication.passportId,
    record_version: publication.recordVersion,
    digest: publication.digest,
    ...(publication.previousDigest ? { previous_digest: publication.previousDigest } : {}),
    published_at: publication.publishedAt,
    change_kinds: publication.changeKinds,
  };
  const signed = { ...entry, signature: await signDetached(env.SIGNING_KEY, canonicalBytes(entry)) };
  const feedEntry: FeedEntry = {
    seq: feedSeqOf(logIndex),
    identity_id: entry.identity_id,
    record_version: entry.record_version,
    digest: entry.digest,
    published_at: entry.published_at,
  };
  // Different keys with no order between them; both are in KV before anything records them written.
  await Promise.all([
    env.SNAPSHOTS.put(historyKey(entry.identity_id, entry.record_version), JSON.stringify(signed), {
      metadata: signed,
    }),
    env.SNAPSHOTS.put(feedKey(feedEntry.seq), JSON.stringify(feedEntry), { metadata: feedEntry }),
  ]);
}

/**
 * Keeps the resolver's manifest index in step with the record: one KV key per (manifest URL,
 * passport) for every verified manifest binding of a passport that is not retired. D1 remembers
 * which keys were written (`published`, read with the aggregate), so removals need no KV read.
 * KV is written here; the D1 statements recording it are returned for the publication's last
 * batch, so a failure in between is simply redone.
 */
async function syncManifestIndex(
  env: PublishEnv,
  db: Database,
  record: PassportRecord,
  published: { key: string }[],
): Promise<BatchItem<"sqlite">[]> {
  // Only proven manifests enter the index: another organisation's unproven claim never changes
  // what a manifest resolves to (docs/bindings.md).
  const manifests =
    record.state.lifecycle === "retired"
      ? []
      : record.bindings.filter((b) => b.class === "manifest" && b.verification.state === "verified");
  if (manifests.length === 0 && published.length === 0) return [];
  const wanted = new Set(
    await Promise.all(manifests.map(async (b) => `${await manifestIndexPrefix(b.value)}${record.identity_id}`)),
  );
  const current = new Set(published.map((row) => row.key));
  const statements: BatchItem<"sqlite">[] = [];
  for (const key of wanted) {
    if (current.has(key)) continue;
    await env.SNAPSHOTS.put(key, record.identity_id);
    statements.push(manifestKeyStatement(db, record.identity_id, key, true));
  }
  for (const key of current) {
    if (wanted.has(key)) continue;
    await env.SNAPSHOTS.delete(key);
    statements.push(manifestKeyStatement(db, record.identity_id, key, false));
  }
  return statements;
}

/**
 * Publishes now and returns the record version published; on failure logs, leaves the outbox row
 * for the scheduled drain and returns undefined.
 */
export async function publishOrDefer(env: PublishEnv, identityId: string): Promise<number | undefined> {
  try {
    return (await publishPassport(env, identityId)).record_version;
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", event: "publish_deferred", identity_id: identityId, message: String(error) }),
    );
    return undefined;
  }
}

const MAX_BACKOFF_SECONDS = 600;

/**
 * How many due rows one drain (one cron run a minute) takes, and how many it publishes at once.
 * Each passport has its own sequencer, so rows run side by side; ten at a time keeps a run of 200
 * to about 20 publication times, well inside a scheduled invocation's time.
 */
const DRAIN_LIMIT = 200;
const DRAINING_AT_ONCE = 10;

/** Runs `task` over `items`, `size` at a time, in order: each group starts when the one before ended. */
export async function inGroupsOf<T>(size: number, items: readonly T[], task: (item: T) => Promise<unknown>) {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map(task));
  }
}

/**
 * Publishes every passport whose outbox row is due, in every shard at once (each shard keeps the
 * outbox of its own passports): in each, oldest first, rows owed only because an organisation
 * changed (`bulk`) after all others, `DRAINING_AT_ONCE` at a time, at most `limit` a shard. A
 * failure is recorded on the row with an exponential backoff (10 s doubling, at most 10 minutes);
 * the row stays until it succeeds. A shard that cannot be read is logged and the others are
 * drained. Runs from the cron trigger; returns how many were published and how many failed.
 */
export async function drainOutbox(
  env: PublishEnv,
  now = new Date(),
  limit = DRAIN_LIMIT,
): Promise<{ published: number; failed: number }> {
  const drained = await onEveryShard(shardsOf(env), "outbox_drain_failed", (db) => drainShard(env, db, now, limit));
  const total = { published: 0, failed: 0 };
  for (const shard of drained) {
    total.published += shard?.published ?? 0;
    total.failed += shard?.failed ?? 0;
  }
  if (total.published + total.failed > 0)
    console.log(JSON.stringify({ level: "info", event: "outbox_drained", ...total }));
  return total;
}

/** One shard's part of the drain. */
async function drainShard(env: PublishEnv, db: Database, now: Date, limit: number) {
  const due = await dueOutboxRows(db, now.toISOString(), limit);
  let published = 0;
  let failed = 0;
  await inGroupsOf(DRAINING_AT_ONCE, due, async (row) => {
    try {
      await publishPassport(env, row.passportId);
      published++;
    } catch (error) {
      failed++;
      const delay = Math.min(10 * 2 ** row.attempts, MAX_BACKOFF_SECONDS);
      // Not recorded when the row cannot be written (its organisation is fenced for a move): it
      // stays due and the next run tries it again, and the rest of this group goes on.
      await deferOutboxRow(db, row.passportId, {
        attempts: row.attempts + 1,
        nextAttemptAt: new Date(now.getTime() + delay * 1000).toISOString(),
        error: String(error),
      }).catch((deferError: unknown) => {
        console.error(
          JSON.stringify({
            level: "error",
            event: "outbox_defer_failed",
            identity_id: row.passportId,
            message: String(deferError),
          }),
        );
      });
    }
  });
  return { published, failed };
}
