/**
 * A client of a transparency log served under `{base}/log/` (docs/transparency-log.md): the
 * signed checkpoint, hash tiles and entry bundles (C2SP tlog-tiles, height 8), and the
 * unauthenticated `latest` hint. Nothing the log serves is trusted until it is tied to a
 * checkpoint signed by the pinned log key: proofs are computed from tiles and checked against the
 * signed root. A tile path names fixed content (a partial tile's width is in its path), so tiles
 * and bundles are cached by path; a cached tile is reused only while proofs built with it keep
 * verifying (one retry with fresh tiles otherwise), and a cached bundle is proved against every
 * new root. Over 400 lines because the client is one thing: each read and the proof that makes
 * it trusted are written together, with the tile cache they share.
 */

import {
  advanceCheckpoint,
  type Checkpoint,
  type CheckpointAdvance,
  chunkInclusionPath,
  consistencyPath,
  decodeBundle,
  entryTilePath,
  type Hash,
  hashTilePath,
  leafHashSync,
  meetsWitnessQuorum,
  type NoteVerifierKey,
  parseCheckpoint,
  parseVerifierKey,
  parseWitnessKey,
  type RememberedCheckpoint,
  rootFromLeafHashesSync,
  type TileReader,
  TileShapeError,
  tileWidth,
  verifyChunk,
  verifyCosignatures,
  verifyInclusion,
  verifyNote,
  type WitnessKey,
} from "@passport/protocol";
import { fetchWithRetry, type HttpPolicy, readCappedBytes, readFailureKind, readStrictJson } from "../http.ts";
import type { CheckpointProblem, NetworkFailureKind } from "../outcome.ts";

const BUNDLE_HEIGHT = 8;
const BUNDLE_WIDTH = 256;
/** Verified checkpoint notes remembered by text (see LogClient). */
const VERIFIED_CHECKPOINTS = 8;

/** A log answer that could not be fetched or used; the verifier reports it as a network failure. */
export class LogFetchError extends Error {
  override name = "LogFetchError";
  readonly url: string;
  readonly failure: LogFetchFailure;
  constructor(url: string, failure: LogFetchFailure) {
    super(failure.detail);
    this.url = url;
    this.failure = failure;
  }
}

export interface LogFetchFailure {
  kind: NetworkFailureKind;
  attempts: number;
  status?: number;
  problem_type?: string;
  detail: string;
}

/** A checkpoint whose note verified under the pinned log key (and the witness policy). */
export interface VerifiedCheckpoint extends Checkpoint {
  /** The `time` extension line, RFC 3339 UTC. */
  time: string;
  timeMs: number;
  /** The configured witnesses whose cosignature verified. */
  cosigners: string[];
}

export type CheckpointCheck =
  | { ok: true; checkpoint: VerifiedCheckpoint }
  | { ok: false; problem: CheckpointProblem; detail: string }
  | { ok: false; problem: "witness_quorum_unmet"; required: number; cosigners: string[] };

/** An entry bundle whose entries hash to the chunk of the signed tree it claims to be. */
export interface BundleView {
  path: string;
  /** Index of the first entry of the bundle. */
  first: number;
  entries: Uint8Array[];
  /** The root of the entries' leaf hashes (derived from them; kept with a cached bundle). */
  root: Hash;
}

export type BundleCheck = { ok: true; bundle: BundleView } | { ok: false; path: string; detail: string };

/** Hash tiles and authenticated entry bundles by path, least recently used dropped first. */
export class TileCache {
  readonly #entries = new Map<string, Uint8Array | BundleView>();
  readonly maxEntries: number;
  constructor(maxEntries = 2048) {
    this.maxEntries = maxEntries;
  }

  get(path: string): Uint8Array | BundleView | undefined {
    const value = this.#entries.get(path);
    if (value) {
      this.#entries.delete(path);
      this.#entries.set(path, value);
    }
    return value;
  }

  set(path: string, value: Uint8Array | BundleView): void {
    this.#entries.delete(path);
    this.#entries.set(path, value);
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  delete(path: string): void {
    this.#entries.delete(path);
  }

  get size(): number {
    return this.#entries.size;
  }
}

export interface LogClientOptions {
  /** The resolver origin; the log is under `{base}/log/`. */
  base: string;
  http: HttpPolicy;
  /** The log's note verifier key, `<origin>+<hex8>+<base64>`, pinned by the caller. */
  key: string;
  /** Witness verifier keys the caller trusts: C2SP cosignature/v1 (type 0x04) or plain note (0x01) keys. */
  witnesses?: readonly string[];
  /** Cosignatures required from `witnesses`; default 0. */
  witnessQuorum?: number;
  cache?: TileCache;
}

const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** The `time` extension line of a checkpoint, in milliseconds since the epoch. */
function checkpointTime(checkpoint: Checkpoint): { time: string; timeMs: number } | undefined {
  const line = checkpoint.extensions.find((extension) => extension.startsWith("time "));
  const time = line?.slice("time ".length);
  if (!time || !RFC3339_UTC.test(time)) return undefined;
  const timeMs = Date.parse(time);
  return Number.isFinite(timeMs) ? { time, timeMs } : undefined;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export class LogClient {
  readonly #base: string;
  readonly #http: HttpPolicy;
  readonly #logKey: NoteVerifierKey;
  readonly #witnessKeys: WitnessKey[];
  readonly #quorum: number;
  readonly cache: TileCache;
  /**
   * Checkpoints whose note verified, by their exact text. Verifying a note is a pure function of
   * its bytes and the pinned keys, so the same text is not verified again; the log signs a new
   * checkpoint on each pass, so a few suffice.
   */
  readonly #verified = new Map<string, VerifiedCheckpoint>();

  private constructor(options: LogClientOptions, logKey: NoteVerifierKey, witnessKeys: WitnessKey[], quorum: number) {
    this.#base = `${options.base.replace(/\/+$/, "")}/log`;
    this.#http = options.http;
    this.#logKey = logKey;
    this.#witnessKeys = witnessKeys;
    this.#quorum = quorum;
    this.cache = options.cache ?? new TileCache();
  }

  /**
   * Parses the pinned keys (the log's: an Ed25519 note key; a witness's: that or a cosignature/v1
   * key); a key that is neither, or whose hash does not match, is a `TypeError`.
   */
  static async create(options: LogClientOptions): Promise<LogClient> {
    const parse = async <T>(what: string, read: () => Promise<T>): Promise<T> => {
      try {
        return await read();
      } catch (error) {
        throw new TypeError(`${what}: ${(error as Error).message}`);
      }
    };
    const logKey = await parse("log key", () => parseVerifierKey(options.key.trim()));
    const witnessKeys: WitnessKey[] = [];
    for (const witness of options.witnesses ?? []) {
      witnessKeys.push(await parse("witness key", () => parseWitnessKey(witness.trim())));
    }
    const names = new Set(witnessKeys.map((witness) => witness.key.name));
    if (names.size !== witnessKeys.length || names.has(logKey.name)) {
      throw new TypeError("witness keys must have distinct names, none the log's own");
    }
    const quorum = options.witnessQuorum ?? 0;
    if (!Number.isInteger(quorum) || quorum < 0 || quorum > witnessKeys.length) {
      throw new TypeError(`witness quorum ${quorum} is not a whole number from 0 to ${witnessKeys.length}`);
    }
    return new LogClient(options, logKey, witnessKeys, quorum);
  }

  /** The log's origin line: the pinned key's name. */
  get origin(): string {
    return this.#logKey.name;
  }

  get witnessQuorum(): number {
    return this.#quorum;
  }

  /** Fetches the checkpoint and verifies its note under the pinned log key and the witness policy. */
  async checkpoint(signal?: AbortSignal): Promise<CheckpointCheck> {
    const bytes = await this.#get("checkpoint", "text/plain", signal);
    let note: string;
    try {
      note = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      return { ok: false, problem: "malformed", detail: "the checkpoint is not UTF-8" };
    }
    const known = this.#verified.get(note);
    if (known) return { ok: true, checkpoint: known };
    const noteKeys = this.#witnessKeys.flatMap((witness) => (witness.kind === "note" ? [witness.key] : []));
    const cosignatureKeys = this.#witnessKeys.flatMap((witness) =>
      witness.kind === "cosignature" ? [witness.key] : [],
    );
    const check = await verifyNote(note, [this.#logKey, ...noteKeys]);
    if (!check.ok) {
      if (check.reason === "malformed")
        return { ok: false, problem: "malformed", detail: "the note is not a signed note" };
      if (check.reason === "bad_signature") {
        return { ok: false, problem: "bad_signature", detail: "a signature by a pinned key does not verify" };
      }
      return { ok: false, problem: "not_signed_by_log", detail: "no pinned key signed the checkpoint" };
    }
    if (!check.signers.includes(this.#logKey.name)) {
      return { ok: false, problem: "not_signed_by_log", detail: `the log key ${this.#logKey.name} did not sign it` };
    }
    const checkpoint = parseCheckpoint(check.text);
    if (!checkpoint) return { ok: false, problem: "malformed", detail: "the note is not a tlog checkpoint" };
    if (checkpoint.origin !== this.#logKey.name) {
      return {
        ok: false,
        problem: "wrong_origin",
        detail: `the checkpoint's origin "${checkpoint.origin}" is not the pinned log's "${this.#logKey.name}"`,
      };
    }
    const time = checkpointTime(checkpoint);
    if (!time) return { ok: false, problem: "no_time", detail: "the checkpoint has no RFC 3339 UTC time line" };
    const cosigned = await verifyCosignatures(note, cosignatureKeys);
    if (!cosigned.ok) {
      return { ok: false, problem: cosigned.reason, detail: "a witness cosignature by a pinned key does not verify" };
    }
    const signers = [...check.signers, ...cosigned.cosigners.map((c) => c.name)];
    const cosigners = signers.filter((name) => name !== this.#logKey.name);
    const witnessNames = this.#witnessKeys.map((witness) => witness.key.name);
    if (!meetsWitnessQuorum(signers, this.#logKey.name, witnessNames, this.#quorum)) {
      return { ok: false, problem: "witness_quorum_unmet", required: this.#quorum, cosigners };
    }
    const verified = { ...checkpoint, ...time, cosigners };
    this.#verified.set(note, verified);
    if (this.#verified.size > VERIFIED_CHECKPOINTS) {
      const oldest = this.#verified.keys().next().value;
      if (oldest !== undefined) this.#verified.delete(oldest);
    }
    return { ok: true, checkpoint: verified };
  }

  /** Whether `entry` (its canonical encoding) is leaf `index` of the checkpoint's tree. */
  proveInclusion(checkpoint: Checkpoint, index: number, entry: Uint8Array, signal?: AbortSignal): Promise<boolean> {
    return this.#proving(checkpoint.size, signal, async (tiles) => {
      const path = await chunkInclusionPath(tiles, 0, index);
      return verifyInclusion(index, checkpoint.size, leafHashSync(entry), path, checkpoint.rootHash);
    });
  }

  /**
   * Whether `offered` may replace `remembered` (checkpoint-state.ts): the consistency proof is
   * computed from the offered tree's tiles.
   */
  async advance(
    remembered: RememberedCheckpoint | undefined,
    offered: Checkpoint,
    signal?: AbortSignal,
  ): Promise<CheckpointAdvance> {
    const next = { size: offered.size, rootHash: offered.rootHash };
    if (!remembered || remembered.size >= offered.size) return advanceCheckpoint(remembered, next, []);
    let result: CheckpointAdvance = { outcome: "first" };
    await this.#proving(offered.size, signal, async (tiles) => {
      result = await advanceCheckpoint(remembered, next, await consistencyPath(tiles, remembered.size));
      return result.outcome === "extended";
    });
    return result;
  }

  /** Entry bundle `n` of the checkpoint's tree, refused unless its entries hash to that chunk of the signed tree. */
  async bundle(checkpoint: Checkpoint, n: number, signal?: AbortSignal): Promise<BundleCheck> {
    const first = n * BUNDLE_WIDTH;
    const width = Math.min(BUNDLE_WIDTH, checkpoint.size - first);
    if (width < 1) throw new RangeError(`bundle ${n} is outside a tree of ${checkpoint.size}`);
    const path = entryTilePath(n, width);
    const cached = this.cache.get(path);
    let bundle: BundleView;
    if (cached && !(cached instanceof Uint8Array)) {
      bundle = cached;
    } else {
      const entries = decodeBundle(await this.#get(path, "application/octet-stream", signal));
      if (!entries || entries.length !== width) {
        return { ok: false, path, detail: `${path} does not hold ${width} well-formed entries` };
      }
      const root = rootFromLeafHashesSync(entries.map(leafHashSync));
      bundle = { path, first, entries, root };
    }
    const { root } = bundle;
    const authentic = await this.#proving(checkpoint.size, signal, (tiles) =>
      verifyChunk(tiles, checkpoint.rootHash, BUNDLE_HEIGHT, n, root),
    );
    if (!authentic) {
      this.cache.delete(path);
      return { ok: false, path, detail: `the entries of ${path} are not that part of the signed tree` };
    }
    this.cache.set(path, bundle);
    return { ok: true, bundle };
  }

  /** Entry bundle `n` of a tree of `size` entries as served, unchecked (an audit compares it with the tiles). */
  async fetchBundle(size: number, n: number, signal?: AbortSignal): Promise<{ path: string; bytes: Uint8Array }> {
    const width = Math.min(BUNDLE_WIDTH, size - n * BUNDLE_WIDTH);
    if (width < 1) throw new RangeError(`bundle ${n} is outside a tree of ${size}`);
    const path = entryTilePath(n, width);
    return { path, bytes: await this.#get(path, "application/octet-stream", signal) };
  }

  /** The resolver's hint of a passport's newest entry; undefined when absent or unusable (it proves nothing). */
  async latest(
    identityId: string,
    signal?: AbortSignal,
  ): Promise<{ index: number; record_version: number } | undefined> {
    const url = `${this.#base}/latest/${encodeURIComponent(identityId)}`;
    const answer = await fetchWithRetry(url, { headers: { accept: "application/json" } }, this.#http, signal);
    if (!answer.ok) return undefined;
    if (answer.response.status !== 200) {
      await answer.response.body?.cancel();
      return undefined;
    }
    const read = await readStrictJson(answer.response, 65_536);
    if (!read.ok || typeof read.value !== "object" || read.value === null) return undefined;
    const { identity_id, index, record_version } = read.value as Record<string, unknown>;
    if (identity_id !== identityId || !Number.isSafeInteger(index) || !Number.isSafeInteger(record_version)) {
      return undefined;
    }
    return { index: index as number, record_version: record_version as number };
  }

  /** Hash tiles of a tree of `size` leaves, fetched on demand through the cache. */
  tiles(size: number, signal?: AbortSignal): TreeTiles {
    return new TreeTiles(size, (path) => this.#tile(path, signal));
  }

  /**
   * Runs `prove` over tiles of a tree of `size`. Tiles it fetched are cached when it
   * succeeds; when it fails having used cached tiles, those are dropped and it runs once more on
   * fresh ones, so a bad tile never sticks in the cache. A tile of the wrong shape fails the proof.
   */
  async #proving(
    size: number,
    signal: AbortSignal | undefined,
    prove: (tiles: TreeTiles) => Promise<boolean>,
  ): Promise<boolean> {
    const attempt = async (): Promise<{ ok: boolean; tiles: TreeTiles }> => {
      const tiles = this.tiles(size, signal);
      try {
        return { ok: await prove(tiles), tiles };
      } catch (error) {
        if (error instanceof TileShapeError) return { ok: false, tiles };
        throw error;
      }
    };
    let result = await attempt();
    if (!result.ok && result.tiles.cachedUsed.length > 0) {
      for (const path of result.tiles.cachedUsed) this.cache.delete(path);
      result = await attempt();
    }
    if (result.ok) for (const [path, tile] of result.tiles.fetched) this.cache.set(path, tile);
    return result.ok;
  }

  async #tile(path: string, signal?: AbortSignal): Promise<{ bytes: Uint8Array; cached: boolean }> {
    const cached = this.cache.get(path);
    if (cached instanceof Uint8Array) return { bytes: cached, cached: true };
    return { bytes: await this.#get(path, "application/octet-stream", signal), cached: false };
  }

  async #get(path: string, accept: string, signal?: AbortSignal): Promise<Uint8Array> {
    const url = `${this.#base}/${path}`;
    const answer = await fetchWithRetry(url, { headers: { accept } }, this.#http, signal);
    if (!answer.ok) {
      const { ok: _, problemType, ...failure } = answer;
      throw new LogFetchError(url, { ...failure, ...(problemType ? { problem_type: problemType } : {}) });
    }
    const { response, attempts } = answer;
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new LogFetchError(url, {
        kind: "unexpected_response",
        attempts,
        status: response.status,
        detail: `the log answered ${response.status} for ${path}`,
      });
    }
    const read = await readCappedBytes(response, this.#http.maxBytes);
    if (!read.ok) {
      throw new LogFetchError(url, { kind: readFailureKind(read), attempts, status: 200, detail: read.problem });
    }
    return read.bytes;
  }
}

/** The hash tiles of one tree size, each fetched once. */
export class TreeTiles implements TileReader {
  readonly #read = new Map<string, Promise<Uint8Array>>();
  /** Paths of tiles read, in order (an audit names them). */
  readonly paths: string[] = [];
  readonly cachedUsed: string[] = [];
  readonly fetched = new Map<string, Uint8Array>();

  readonly size: number;
  readonly #fetchTile: (path: string) => Promise<{ bytes: Uint8Array; cached: boolean }>;

  constructor(size: number, fetchTile: (path: string) => Promise<{ bytes: Uint8Array; cached: boolean }>) {
    this.size = size;
    this.#fetchTile = fetchTile;
  }

  tile(level: number, n: number): Promise<Uint8Array> {
    const width = tileWidth(this.size, level, n);
    if (width === 0)
      return Promise.reject(new TileShapeError(level, n, `no tile ${level}/${n} in a tree of ${this.size}`));
    const path = hashTilePath(level, n, width);
    let read = this.#read.get(path);
    if (!read) {
      read = this.#fetchTile(path).then(({ bytes, cached }) => {
        if (bytes.length !== width * 32) {
          throw new TileShapeError(level, n, `${path} holds ${bytes.length} bytes, not ${width * 32}`);
        }
        if (cached) this.cachedUsed.push(path);
        else this.fetched.set(path, bytes);
        return bytes;
      });
      this.#read.set(path, read);
      this.paths.push(path);
    }
    return read;
  }
}
