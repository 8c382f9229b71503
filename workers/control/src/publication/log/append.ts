import { unwrap } from "@passport/domain";
import type { Database } from "../../db/client.ts";
import { onEveryShard } from "../../db/shard-tasks.ts";
import { type ShardEnv, shardsOf } from "../../db/shards.ts";
import { type PublicationRow, setLogIndex, setLogIndexes, unloggedPublications } from "../queries.ts";
import type { LogAppend } from "./transparency-log.ts";

type LogBindings = Pick<Env, "TRANSPARENCY_LOG" | "LOG_ORIGIN">;

/** The one global log (docs/transparency-log.md), addressed by its origin. */
export const transparencyLog = (env: LogBindings) => env.TRANSPARENCY_LOG.getByName(env.LOG_ORIGIN);

const entryOf = (publication: PublicationRow): LogAppend => ({
  identity_id: publication.passportId,
  record_version: publication.recordVersion,
  digest: publication.digest,
  published_at: publication.publishedAt,
});

/**
 * The log index of a publication: the one D1 already records, or a new append. The append is
 * idempotent in the log, so a retry after a lost answer, or after the statement recording the
 * index was lost, gets the same index. The caller records a new index with `setLogIndex`, in a
 * batch it sends anyway.
 */
export async function logIndexOf(env: LogBindings, publication: PublicationRow): Promise<number> {
  if (publication.logIndex !== null) return publication.logIndex;
  const { index } = unwrap(await transparencyLog(env).append(entryOf(publication)));
  return index;
}

/** `logIndexOf`, recorded in D1 at once. */
export async function logPublication(env: LogBindings, db: Database, publication: PublicationRow): Promise<number> {
  const index = await logIndexOf(env, publication);
  if (publication.logIndex === null) await setLogIndex(db, publication.seq, index);
  return index;
}

/**
 * Appends publications that have no log entry yet (those made before the log existed), oldest
 * first, a page at a time, up to `pages` pages; returns how many it logged. Run by the scheduled
 * handler, so `npm run log-backfill` only waits for it (docs/transparency-log.md, "Backfill").
 */
export async function backfillLog(env: LogBindings, db: Database, pageSize = 100, pages = 10): Promise<number> {
  let logged = 0;
  for (let page = 0; page < pages; page++) {
    const rows = await unloggedPublications(db, pageSize);
    if (rows.length === 0) break;
    const { indexes } = unwrap(await transparencyLog(env).appendMany(rows.map(entryOf)));
    await setLogIndexes(
      db,
      rows.map((row, i) => ({ seq: row.seq, index: indexes[i] as number })),
    );
    logged += rows.length;
    if (rows.length < pageSize) break;
  }
  if (logged > 0) console.log(JSON.stringify({ level: "info", event: "log_backfilled", logged }));
  return logged;
}

/**
 * The scheduled handler's part: the backfill of every shard (each numbers and holds its own
 * publications; a shard that fails is logged and the others go on), then a publication pass for
 * whatever tiles or checkpoint a failed pass left out of KV (or a fresh signature on an idle log's
 * checkpoint).
 */
export async function maintainLog(env: LogBindings & ShardEnv): Promise<void> {
  await onEveryShard(shardsOf(env), "log_backfill_failed", (db) => backfillLog(env, db));
  try {
    unwrap(await transparencyLog(env).publish());
  } catch (error) {
    console.error(JSON.stringify({ level: "error", event: "log_publish_failed", message: String(error) }));
  }
}
