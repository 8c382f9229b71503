// Republishing every passport (docs/deploy.md, docs/signing.md): after a key rotation or a KV
// restore, each passport is put back into the publication outbox at its current version, one page
// at a time in id order, and the scheduled drain publishes it through its sequencer like any other
// change. `npm run republish` runs these statements with `wrangler d1 execute`; they are plain SQL
// strings because that command takes no bound parameters.

/** Ids are made by randomId; anything else is refused rather than quoted into SQL. */
const SAFE_ID = /^[A-Za-z0-9_-]*$/;

/**
 * Enqueues up to `limit` passports whose id sorts after `cursor` (empty: from the start) and
 * returns their ids (`passport_id`); the largest is the next cursor, none means done. A pending
 * publication keeps its newer version; its backoff is reset so it runs on the next drain. The rows
 * are `bulk`: the drain takes every other due publication first (migration 0013).
 */
export function enqueueRepublishPage(cursor: string, limit: number): string {
  if (!SAFE_ID.test(cursor)) throw new Error("republish cursor is not a passport id");
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new Error("page size must be 1 to 1000");
  return [
    "INSERT INTO outbox (passport_id, record_version, attempts, next_attempt_at, bulk)",
    `SELECT id, record_version, 0, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 1 FROM passports WHERE id > '${cursor}' ORDER BY id LIMIT ${limit}`,
    "ON CONFLICT (passport_id) DO UPDATE SET record_version = max(outbox.record_version, excluded.record_version),",
    "attempts = 0, next_attempt_at = excluded.next_attempt_at, bulk = min(outbox.bulk, excluded.bulk)",
    "RETURNING passport_id",
  ].join(" ");
}

/** How many publications the outbox still owes: the command waits for it to fall before the next page. */
export const OUTBOX_BACKLOG = "SELECT count(*) AS backlog FROM outbox";

/** Publications the transparency log does not hold yet: `npm run log-backfill` waits for none to be left. */
export const UNLOGGED_PUBLICATIONS = "SELECT count(*) AS unlogged FROM publications WHERE log_index IS NULL";
