import { DurableObject } from "cloudflare:workers";
import {
  LOG_CHECKPOINT_KEY,
  type LogLatest,
  logLatestKey,
  logTileKey,
  type RpcOutcome,
  settle,
} from "@passport/domain";
import {
  encodeBundle,
  encodeEntry,
  entryTilePath,
  formatCheckpoint,
  hashTilePath,
  signatureLine,
} from "@passport/protocol";
import { outboundFor } from "../../outbound/config.ts";
import { KV_KEY_WRITE_INTERVAL_MS, waitFor } from "../kv-writes.ts";
import { logKey } from "./log-key.ts";
import {
  appendLeaf,
  changedTiles,
  consistencyPath,
  HASH_SIZE,
  leafHash,
  packEdge,
  rootOfEdge,
  TILE_WIDTH,
  unpackEdge,
} from "./tree.ts";
import { addCheckpoint, configuredWitnesses } from "./witness.ts";

export type LogEnv = Env & { LOG_SIGNING_KEY?: string };

/** One publication to log (docs/transparency-log.md, "Entry"). */
export interface LogAppend {
  identity_id: string;
  record_version: number;
  digest: string;
  published_at: string;
}

/** How old the served checkpoint may get while nothing is appended before it is signed again. */
const CHECKPOINT_REFRESH_SECONDS = 600;

/**
 * The least time from the end of one publication pass to the start of the next. Each pass writes
 * the checkpoint, the partial tiles at the tree's right edge and the hints of the passports it
 * logged again, and KV takes one write a second to a key (docs/platform-model.md): starting a
 * pass this long after the previous one ended keeps every key to one write a second, whatever
 * each pass takes. Appends that arrive meanwhile share the next pass, so under load each changed
 * tile, entry bundle and the checkpoint is written once for many entries (scripts/bench/README.md).
 * An entry's checkpoint may come this much later than its record; the resolver caches a
 * checkpoint for 5 s in any case.
 */
const PASS_SPACING_MS = KV_KEY_WRITE_INTERVAL_MS;

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS entries (
     idx INTEGER PRIMARY KEY, identity_id TEXT NOT NULL, record_version INTEGER NOT NULL,
     digest TEXT NOT NULL, body BLOB NOT NULL)`,
  "CREATE UNIQUE INDEX IF NOT EXISTS entries_version ON entries (identity_id, record_version)",
  `CREATE TABLE IF NOT EXISTS hashes (
     level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (level, idx))`,
  // One row: the appended size, the size whose tiles and checkpoint are in KV, the right edge of
  // the tree (the roots of its complete subtrees) and when the served checkpoint was signed.
  `CREATE TABLE IF NOT EXISTS head (
     id INTEGER PRIMARY KEY CHECK (id = 0), size INTEGER NOT NULL, published INTEGER NOT NULL,
     edge BLOB NOT NULL, signed_at TEXT)`,
  "INSERT OR IGNORE INTO head (id, size, published, edge) VALUES (0, 0, 0, x'')",
  // The size each witness last cosigned: the next add-checkpoint proves consistency from there.
  "CREATE TABLE IF NOT EXISTS witnesses (name TEXT PRIMARY KEY, size INTEGER NOT NULL)",
];

type Head = { size: number; published: number; edge: Uint8Array[]; signedAt: string | null };

/**
 * The global transparency log (docs/transparency-log.md): one instance, addressed by the log's
 * origin (LOG_ORIGIN). Appends run as one synchronous storage transaction each, so they are
 * serialized and atomic without a queue, and are idempotent per (identity id, version, digest).
 * Publishing the tiles, entry bundles, per-passport hints and a signed checkpoint to KV happens
 * after, one pass at a time; a pass that fails leaves `published` behind `size`, and the next
 * append or the scheduled handler publishes what is missing.
 */
export class TransparencyLog extends DurableObject<LogEnv> {
  #running: Promise<unknown> = Promise.resolve();
  #waiting: Promise<void> | undefined;
  /** When the last pass that wrote to KV ended, whether it succeeded or not. */
  #lastPassEndedAt = 0;

  constructor(ctx: DurableObjectState, env: LogEnv) {
    super(ctx, env);
    for (const statement of SCHEMA) ctx.storage.sql.exec(statement);
  }

  /**
   * Appends one publication, or returns the index it already has. The same version with another
   * digest is refused: the log never holds two records for one version. The index is returned as
   * soon as the entry is stored; publishing to KV follows in the background, coalesced with other
   * appends (a failure is logged and left to the next pass), so a publication waits for the log's
   * storage only, not for its KV writes and signature. A refusal is answered, not thrown
   * (`RpcOutcome`).
   */
  append(entry: LogAppend): Promise<RpcOutcome<{ index: number }>> {
    return settle(() => {
      const [index] = this.#appendAll([entry]);
      this.ctx.waitUntil(this.#publishQuietly());
      return { index: index as number };
    });
  }

  /** Appends publications in the given order (the backfill), each as {@link append} would. */
  appendMany(entries: LogAppend[]): Promise<RpcOutcome<{ indexes: number[] }>> {
    return settle(() => {
      const indexes = this.#appendAll(entries);
      this.ctx.waitUntil(this.#publishQuietly());
      return { indexes };
    });
  }

  /**
   * Writes to KV whatever was appended but not yet published, and signs a new checkpoint; with
   * nothing new, signs the same tree again once the served checkpoint is older than
   * {@link CHECKPOINT_REFRESH_SECONDS}, so a consumer's freshness bound is met while the log is idle.
   * Calls made while a pass runs, or within PASS_SPACING_MS of the end of the previous one, share
   * the next pass. A failed pass is answered, not thrown (`RpcOutcome`).
   */
  publish(): Promise<RpcOutcome<void>> {
    return settle(() => this.#publish());
  }

  #publish(): Promise<void> {
    this.#checkName();
    if (this.#waiting) return this.#waiting;
    const run = this.#running.then(async () => {
      // Calls made while this run waits out the spacing still share it.
      await waitFor(this.#lastPassEndedAt + PASS_SPACING_MS - Date.now());
      this.#waiting = undefined;
      return this.#publishPass();
    });
    this.#waiting = run;
    this.#running = run.catch(() => undefined);
    return run;
  }

  /** Appended and published sizes (for the operator commands and tests). */
  sizes(): { size: number; published: number } {
    const { size, published } = this.#head();
    return { size, published };
  }

  #checkName() {
    // A second instance would be a second, unordered log.
    const name = this.ctx.id.name;
    if (name !== undefined && name !== this.env.LOG_ORIGIN) {
      throw new Error(`the log ${name} is not the configured log ${this.env.LOG_ORIGIN}`);
    }
  }

  #head(): Head {
    const row = this.ctx.storage.sql
      .exec<{ size: number; published: number; edge: ArrayBuffer; signed_at: string | null }>(
        "SELECT size, published, edge, signed_at FROM head WHERE id = 0",
      )
      .one();
    return {
      size: row.size,
      published: row.published,
      edge: unpackEdge(new Uint8Array(row.edge)),
      signedAt: row.signed_at,
    };
  }

  #appendAll(entries: LogAppend[]): number[] {
    this.#checkName();
    const sql = this.ctx.storage.sql;
    // Synchronous from here to the end: no other call can run in between, and the transaction
    // makes the entries, the tile hashes and the new head one atomic write.
    return this.ctx.storage.transactionSync(() => {
      const head = this.#head();
      let size = head.size;
      const indexes = entries.map((entry) => {
        const existing = sql
          .exec<{ idx: number; digest: string }>(
            "SELECT idx, digest FROM entries WHERE identity_id = ? AND record_version = ?",
            entry.identity_id,
            entry.record_version,
          )
          .toArray()[0];
        if (existing) {
          if (existing.digest !== entry.digest) {
            throw new Error(
              `the log already holds version ${entry.record_version} of ${entry.identity_id} with another digest`,
            );
          }
          return existing.idx;
        }
        const body = encodeEntry({
          identityId: entry.identity_id,
          recordVersion: entry.record_version,
          digest: entry.digest,
          publishedAt: entry.published_at,
        });
        const index = size++;
        sql.exec(
          "INSERT INTO entries (idx, identity_id, record_version, digest, body) VALUES (?, ?, ?, ?, ?)",
          index,
          entry.identity_id,
          entry.record_version,
          entry.digest,
          body,
        );
        for (const tileHash of appendLeaf(head.edge, index, leafHash(body))) {
          sql.exec(
            "INSERT INTO hashes (level, idx, hash) VALUES (?, ?, ?)",
            tileHash.level,
            tileHash.index,
            tileHash.hash,
          );
        }
        return index;
      });
      sql.exec("UPDATE head SET size = ?, edge = ? WHERE id = 0", size, packEdge(head.edge));
      return indexes;
    });
  }

  /**
   * A pass that failed (a KV write refused or failed, a witness answer that threw) is tried again
   * from the object's alarm, a pass spacing later, so what was appended reaches KV without waiting
   * for the next append or the scheduled handler. The alarm survives eviction; one that fails
   * is retried by the platform with backoff.
   */
  async #publishQuietly(): Promise<void> {
    try {
      await this.#publish();
    } catch (error) {
      console.error(JSON.stringify({ level: "error", event: "log_publish_failed", message: String(error) }));
      try {
        if ((await this.ctx.storage.getAlarm()) === null) {
          await this.ctx.storage.setAlarm(Date.now() + PASS_SPACING_MS);
        }
      } catch (alarmError) {
        console.error(
          JSON.stringify({ level: "error", event: "log_retry_not_scheduled", message: String(alarmError) }),
        );
      }
    }
  }

  /** The retry of a failed pass (see #publishQuietly); a pass with nothing new writes nothing. */
  override async alarm(): Promise<void> {
    await this.#publish();
  }

  async #publishPass(): Promise<void> {
    const head = this.#head();
    const now = new Date();
    const signedAt = head.signedAt ? Date.parse(head.signedAt) : Number.NaN;
    const stale = !(now.getTime() - signedAt < CHECKPOINT_REFRESH_SECONDS * 1000);
    if (head.size === head.published && !stale) return;
    try {
      await this.#writePass(head, now);
    } finally {
      // Only a pass that writes spaces the next one, from when its last write ended.
      this.#lastPassEndedAt = Date.now();
    }
  }

  async #writePass(head: Head, now: Date): Promise<void> {
    // Rows below `size` never change, so reading them across the awaits below is consistent.
    const kv = this.env.SNAPSHOTS;
    // One key per tile, holding its widest version: a partial tile of width W is the first W
    // hashes (or entries) of any wider one, so the resolver serves `.p/W` as a prefix and KV keeps
    // one copy per tile instead of one per width. A full tile is written once and never changes.
    const writes: Promise<void>[] = [];
    for (const tile of changedTiles(head.published, head.size)) {
      writes.push(kv.put(logTileKey(hashTilePath(tile.level, tile.index)), this.#hashTile(tile)));
      if (tile.level === 0) {
        writes.push(kv.put(logTileKey(entryTilePath(tile.index)), this.#entryBundle(tile.index, tile.width)));
      }
    }
    for (const latest of this.#latestSince(head.published, head.size)) {
      writes.push(kv.put(logLatestKey(latest.identity_id), JSON.stringify(latest)));
    }
    // Signing overlaps the writes; the checkpoint goes to KV only after all of them succeeded, so
    // it never names a tree whose tiles are not yet there.
    const time = `${now.toISOString().slice(0, 19)}Z`;
    const [signed] = await Promise.all([this.#signCheckpoint(head, time), ...writes]);
    await kv.put(LOG_CHECKPOINT_KEY, `${signed}${(await this.#cosign(signed, head.size)).join("")}`);
    this.ctx.storage.sql.exec(
      "UPDATE head SET published = max(published, ?), signed_at = ? WHERE id = 0",
      head.size,
      now.toISOString(),
    );
  }

  #hashTile(tile: { level: number; index: number; width: number }): Uint8Array {
    const rows = this.ctx.storage.sql
      .exec<{ hash: ArrayBuffer }>(
        "SELECT hash FROM hashes WHERE level = ? AND idx >= ? AND idx < ? ORDER BY idx",
        tile.level,
        tile.index * TILE_WIDTH,
        tile.index * TILE_WIDTH + tile.width,
      )
      .toArray();
    if (rows.length !== tile.width) throw new Error(`log tile ${tile.level}/${tile.index} is missing hashes`);
    const bytes = new Uint8Array(tile.width * HASH_SIZE);
    for (const [i, row] of rows.entries()) bytes.set(new Uint8Array(row.hash), i * HASH_SIZE);
    return bytes;
  }

  #entryBundle(index: number, width: number): Uint8Array {
    const rows = this.ctx.storage.sql
      .exec<{ body: ArrayBuffer }>(
        "SELECT body FROM entries WHERE idx >= ? AND idx < ? ORDER BY idx",
        index * TILE_WIDTH,
        index * TILE_WIDTH + width,
      )
      .toArray();
    if (rows.length !== width) throw new Error(`log entry bundle ${index} is missing entries`);
    return encodeBundle(rows.map((row) => new Uint8Array(row.body)));
  }

  /**
   * The newest entry (highest version) in the tree of `to` leaves of every passport with an entry
   * at index from..to-1. By version, not index: the backfill may append an old version late.
   */
  #latestSince(from: number, to: number): LogLatest[] {
    return this.ctx.storage.sql
      .exec<{ identity_id: string; idx: number; record_version: number }>(
        `SELECT e.identity_id, e.idx, e.record_version FROM entries e
         WHERE e.identity_id IN (SELECT identity_id FROM entries WHERE idx >= ? AND idx < ?)
           AND e.record_version = (
             SELECT max(record_version) FROM entries WHERE identity_id = e.identity_id AND idx < ?)`,
        from,
        to,
        to,
      )
      .toArray()
      .map((row) => ({ identity_id: row.identity_id, index: row.idx, record_version: row.record_version }));
  }

  /**
   * Cosignature lines for a signed checkpoint from each configured witness (LOG_WITNESSES, C2SP
   * tlog-witness), through the control plane's outbound adapter. A witness that fails is logged
   * and left out: the checkpoint is served with the signatures it has.
   */
  async #cosign(note: string, size: number): Promise<string[]> {
    const lines: string[] = [];
    const outbound = outboundFor(this.env);
    const sql = this.ctx.storage.sql;
    for (const witness of configuredWitnesses(this.env.LOG_WITNESSES)) {
      const known = sql.exec<{ size: number }>("SELECT size FROM witnesses WHERE name = ?", witness.name).toArray()[0];
      let oldSize = Math.min(known?.size ?? 0, size);
      // A 409 names the size the witness last cosigned; one retry from there.
      for (let attempt = 0; attempt < 2; attempt++) {
        const proof = consistencyPath(oldSize, size, (level, index) => this.#storedHash(level, index));
        const answer = await addCheckpoint(outbound, witness, oldSize, proof, note);
        if (answer.kind === "cosigned") {
          lines.push(...answer.lines.map((line) => `${line}\n`));
          sql.exec(
            "INSERT INTO witnesses (name, size) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET size = excluded.size",
            witness.name,
            size,
          );
          break;
        }
        if (answer.kind === "conflict" && attempt === 0 && answer.size <= size) {
          oldSize = answer.size;
          continue;
        }
        const reason = answer.kind === "failed" ? answer.reason : `the witness is at size ${answer.size}`;
        console.error(JSON.stringify({ level: "error", event: "log_witness_failed", witness: witness.name, reason }));
        break;
      }
    }
    return lines;
  }

  #storedHash(level: number, index: number): Uint8Array {
    const row = this.ctx.storage.sql
      .exec<{ hash: ArrayBuffer }>("SELECT hash FROM hashes WHERE level = ? AND idx = ?", level, index)
      .toArray()[0];
    if (!row) throw new Error(`log hash ${level}/${index} is missing`);
    return new Uint8Array(row.hash);
  }

  async #signCheckpoint(head: Head, time: string): Promise<string> {
    const origin = this.env.LOG_ORIGIN;
    const key = await logKey(this.env.LOG_SIGNING_KEY, origin);
    const body = formatCheckpoint({
      origin,
      size: head.size,
      rootHash: rootOfEdge(head.edge),
      extensions: [`time ${time}`],
    });
    return `${body}\n${await signatureLine(body, key.verifierKey, key.privateKey)}`;
  }
}
