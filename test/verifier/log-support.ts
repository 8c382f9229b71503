import { encodeBundle, encodeEntry, type LogEntry } from "../../packages/protocol/src/log/entry.ts";
import { type Hash, leafHash, rootFromLeafHashes } from "../../packages/protocol/src/log/merkle.ts";
import { formatCheckpoint, formatVerifierKey, signatureLine } from "../../packages/protocol/src/log/note.ts";
import { entryTilePath, hashTiles } from "../../packages/protocol/src/log/tiles.ts";
import {
  canonicalDigest,
  type FetchLike,
  type LogOptions,
  Verifier,
  type VerifierOptions,
} from "../../packages/verifier/src/index.ts";
import { type ContractRecord, contractRecord, NOW, RecordServer } from "./support.ts";

/**
 * A resolver serving signed records with `Passport-Log-Index`, their histories, and a
 * transparency log built in memory from the log library exactly as the wire contract in
 * docs/transparency-log.md describes (checkpoint, tiles, bundles, latest hint). Tests change
 * what it serves to play a hostile resolver or log.
 */
export const LOG_RESOLVER = "https://log.test";
export const LOG_ORIGIN = "log.test/passport";

export interface NoteSigner {
  name: string;
  verifierKey: string;
  privateKey: CryptoKey;
}

export async function noteSigner(name: string): Promise<NoteSigner> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const raw = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  return { name, verifierKey: await formatVerifierKey(name, raw), privateKey: pair.privateKey };
}

/** A witness signing C2SP tlog-cosignature v1 lines (key type 0x04), written here from the specification. */
export interface Cosigner {
  name: string;
  verifierKey: string;
  sign: (body: string, timestamp: number) => Promise<string>;
}

export async function cosigner(name: string): Promise<Cosigner> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const typed = Uint8Array.of(
    0x04,
    ...new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer),
  );
  const hashed = new Uint8Array([...new TextEncoder().encode(`${name}\n`), ...typed]);
  const keyId = new Uint8Array(await crypto.subtle.digest("SHA-256", hashed)).slice(0, 4);
  const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
  const hex = [...keyId].map((b) => b.toString(16).padStart(2, "0")).join("");
  return {
    name,
    verifierKey: `${name}+${hex}+${b64(typed)}`,
    sign: async (body, timestamp) => {
      const message = new TextEncoder().encode(`cosignature/v1\ntime ${timestamp}\n${body}`);
      const signature = new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, pair.privateKey, message));
      const blob = new Uint8Array(4 + 8 + 64);
      blob.set(keyId);
      new DataView(blob.buffer).setBigUint64(4, BigInt(timestamp));
      blob.set(signature, 12);
      return `\u2014 ${name} ${b64(blob)}\n`;
    },
  };
}

export interface Published {
  record: ContractRecord & { digest: string };
  text: string;
  signature: string;
  index: number;
}

export interface CheckpointSpec {
  size?: number;
  /** Milliseconds since the epoch; default {@link NOW}. */
  time?: number;
  witnesses?: NoteSigner[];
  /** Witnesses adding cosignature/v1 lines, timestamped at `time`. */
  cosigners?: Cosigner[];
  /** The key signing as the log; default the log's own. */
  signer?: NoteSigner;
}

const problem = (status: number, type: string) =>
  Response.json(
    { type: `urn:svc:passport:problem:${type}`, status },
    { status, headers: { "content-type": "application/problem+json" } },
  );

export class LogResolver {
  readonly records: RecordServer;
  readonly key: NoteSigner;
  readonly entries: LogEntry[] = [];
  readonly published = new Map<string, Published[]>();
  /** The version served as current per passport (default: the newest). */
  readonly serving = new Map<string, number>();
  /** The history cut short at this version per passport. */
  readonly historyUpTo = new Map<string, number>();
  /** The `latest` hint per passport: absent = truthful, null = 404, else this answer. */
  readonly hints = new Map<string, { index: number; record_version: number } | null>();
  /** Tiles and bundles served in place of the real ones, by path under /log/. */
  readonly tampered = new Map<string, Uint8Array>();
  /** Serve records without `Passport-Log-Index`. */
  withoutIndex = false;
  #checkpoint: CheckpointSpec = {};
  readonly #tiles = new Map<number, Promise<Map<string, Uint8Array>>>();

  constructor(records: RecordServer, key: NoteSigner) {
    this.records = records;
    this.key = key;
  }

  static async create(): Promise<LogResolver> {
    return new LogResolver(await RecordServer.create(), await noteSigner(LOG_ORIGIN));
  }

  /** Another log under the same keys whose first `keep` entries are these, for split views and rewritten histories. */
  fork(keep = this.entries.length): LogResolver {
    const other = new LogResolver(this.records, this.key);
    other.entries.push(...this.entries.slice(0, keep));
    for (const [id, versions] of this.published) {
      other.published.set(
        id,
        versions.filter((v) => v.index < keep),
      );
    }
    return other;
  }

  /** Entries of passports this resolver serves no record for. */
  filler(count: number): void {
    for (let i = 0; i < count; i++) {
      const n = this.entries.length;
      this.entries.push({
        identityId: `psp_filler${String(n).padStart(6, "0")}`,
        recordVersion: 1,
        digest: `sha-256:filler-${n}`,
        publishedAt: this.#time(n),
      });
    }
  }

  #time(index: number): string {
    return new Date(NOW - 86_400_000 + index * 1000).toISOString();
  }

  /** Publishes the next version of `id` (a new passport when absent) and appends its entry. */
  async publish(id?: string): Promise<Published> {
    const versions = id ? (this.published.get(id) ?? []) : [];
    const previous = versions.at(-1)?.record;
    const index = this.entries.length;
    const base = previous ?? contractRecord();
    const { digest: _, ...content } = {
      ...base,
      record_version: ((previous?.record_version as number | undefined) ?? 0) + 1,
      published_at: this.#time(index),
      display_name: `Contract test API, version ${((previous?.record_version as number | undefined) ?? 0) + 1}`,
    } as ContractRecord & { digest?: string };
    const record = { ...content, digest: await canonicalDigest(content) } as ContractRecord & { digest: string };
    const published = { record, text: JSON.stringify(record), signature: await this.records.sign(record), index };
    this.published.set(record.identity_id, [...versions, published]);
    this.entries.push({
      identityId: record.identity_id,
      recordVersion: record.record_version as number,
      digest: record.digest,
      publishedAt: record.published_at as string,
    });
    return published;
  }

  /** Serves this checkpoint from now on (default: the whole log, signed at {@link NOW}). */
  serveCheckpoint(spec: CheckpointSpec): void {
    this.#checkpoint = spec;
  }

  get size(): number {
    return this.#checkpoint.size ?? this.entries.length;
  }

  async root(size = this.size): Promise<Hash> {
    return rootFromLeafHashes(await this.#leaves(size));
  }

  #leaves(size: number): Promise<Hash[]> {
    return Promise.all(this.entries.slice(0, size).map((entry) => leafHash(encodeEntry(entry))));
  }

  /** The checkpoint note for `spec`. */
  async note(spec: CheckpointSpec = this.#checkpoint): Promise<string> {
    const size = spec.size ?? this.entries.length;
    const time = new Date(spec.time ?? NOW).toISOString().replace(/\.\d{3}Z$/, "Z");
    const body = formatCheckpoint({
      origin: LOG_ORIGIN,
      size,
      rootHash: await this.root(size),
      extensions: [`time ${time}`],
    });
    const signer = spec.signer ?? this.key;
    let note = `${body}\n${await signatureLine(body, signer.verifierKey, signer.privateKey)}`;
    for (const witness of spec.witnesses ?? []) {
      note += await signatureLine(body, witness.verifierKey, witness.privateKey);
    }
    for (const witness of spec.cosigners ?? []) note += await witness.sign(body, Math.floor((spec.time ?? NOW) / 1000));
    return note;
  }

  /** Every hash tile and entry bundle of the tree of `size`, by path under /log/. */
  tiles(size = this.size): Promise<Map<string, Uint8Array>> {
    let tiles = this.#tiles.get(size);
    if (!tiles) {
      tiles = (async () => {
        const all = await hashTiles(await this.#leaves(size), rootFromLeafHashes);
        for (let n = 0; n * 256 < size; n++) {
          const entries = this.entries.slice(n * 256, Math.min(size, (n + 1) * 256)).map(encodeEntry);
          all.set(entryTilePath(n, entries.length), encodeBundle(entries));
        }
        return all;
      })();
      this.#tiles.set(size, tiles);
    }
    return tiles;
  }

  /** The entry of `id` at `version`. */
  version(id: string, version: number): Published {
    const found = this.published.get(id)?.find((p) => p.record.record_version === version);
    if (!found) throw new Error(`no version ${version} of ${id}`);
    return found;
  }

  readonly fetch: FetchLike = async (input) => {
    const url = new URL(input);
    if (url.origin !== LOG_RESOLVER) return problem(404, "route-not-found");
    const path = url.pathname;
    if (path === "/log/checkpoint") {
      return new Response(await this.note(), { headers: { "content-type": "text/plain; charset=utf-8" } });
    }
    if (path === "/log/key") return new Response(`${this.key.verifierKey}\n`);
    if (path.startsWith("/log/latest/")) {
      const id = decodeURIComponent(path.slice("/log/latest/".length));
      const hint = this.hints.has(id) ? this.hints.get(id) : this.#latest(id);
      return hint ? Response.json({ identity_id: id, ...hint }) : problem(404, "identity-not-found");
    }
    if (path.startsWith("/log/tile/")) {
      const tilePath = path.slice("/log/".length);
      const tile = this.tampered.get(tilePath) ?? (await this.tiles()).get(tilePath);
      return tile
        ? new Response(tile, { headers: { "content-type": "application/octet-stream" } })
        : problem(404, "route-not-found");
    }
    const history = /^\/api\/p\/([^/]+)\/history\.json$/.exec(path)?.[1];
    if (history) {
      const id = decodeURIComponent(history);
      // Every publication of the passport, as logged (filler passports included).
      const upTo = this.historyUpTo.get(id) ?? Number.POSITIVE_INFINITY;
      const entries = this.entries
        .filter((entry) => entry.identityId === id && entry.recordVersion <= upTo)
        .map((entry) => ({
          identity_id: id,
          record_version: entry.recordVersion,
          digest: entry.digest,
          published_at: entry.publishedAt,
          change_kinds: ["state"],
          signature: "not-checked-here",
        }));
      if (entries.length === 0) return problem(404, "identity-not-found");
      return Response.json({ identity_id: id, entries });
    }
    const record = /^\/api\/p\/([^/]+)\.json$/.exec(path)?.[1];
    const id = record ? decodeURIComponent(record) : "";
    const versions = this.published.get(id);
    if (!versions) return problem(404, "identity-not-found");
    const wanted = this.serving.get(id);
    const served = (wanted ? versions.find((v) => v.record.record_version === wanted) : undefined) ?? versions.at(-1);
    if (!served) return problem(404, "identity-not-found");
    return new Response(served.text, {
      headers: {
        "content-type": "application/json",
        "cache-control": "no-cache",
        "passport-signature": served.signature,
        ...(this.withoutIndex ? {} : { "passport-log-index": String(served.index) }),
      },
    });
  };

  #latest(id: string): { index: number; record_version: number } | undefined {
    let latest: { index: number; record_version: number } | undefined;
    this.entries.slice(0, this.size).forEach((entry, index) => {
      if (entry.identityId === id) latest = { index, record_version: entry.recordVersion };
    });
    return latest;
  }

  /** A verifier trusting this resolver's record key and pinning its log key, with its clock at {@link NOW}. */
  verifier(log: Partial<LogOptions> = {}, options: Partial<VerifierOptions> = {}): Verifier {
    return new Verifier({
      resolver: LOG_RESOLVER,
      fetch: this.fetch,
      jwks: this.records.jwks,
      now: () => NOW,
      retryDelayMs: 1,
      log: { key: this.key.verifierKey, maxAge: "1h", ...log },
      ...options,
    });
  }
}
