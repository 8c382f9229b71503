import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { mintIdentityId, type SnapshotMetadata, snapshotKey, unwrap } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { decodeBundle, decodeEntry, type LogEntry } from "../../packages/protocol/src/log/entry.ts";
import {
  consistencyProof,
  inclusionProof,
  leafHash,
  rootFromLeafHashes,
  sameHash,
  verifyConsistency,
  verifyInclusion,
} from "../../packages/protocol/src/log/merkle.ts";
import {
  meetsWitnessQuorum,
  parseCheckpoint,
  parseVerifierKey,
  verifyNote,
} from "../../packages/protocol/src/log/note.ts";
import { entryTilePath, hashTilePath, hashTiles, leafHashesFromTiles } from "../../packages/protocol/src/log/tiles.ts";
import { logBackfill } from "../../scripts/deploy/log-backfill.ts";
import { type RepublishContext, republishAll } from "../../scripts/deploy/republish.ts";
import { logKeyPair } from "../../scripts/dev-keys.mjs";
import { database } from "../../workers/control/src/db/client.ts";
import { backfillLog, maintainLog, transparencyLog } from "../../workers/control/src/publication/log/append.ts";
import type { LogEnv } from "../../workers/control/src/publication/log/transparency-log.ts";
import {
  appendLeaf,
  changedTiles,
  consistencyPath,
  rootOfEdge,
  leafHash as writerLeafHash,
} from "../../workers/control/src/publication/log/tree.ts";
import { drainOutbox } from "../../workers/control/src/publication/publish.ts";
import { Caller, uniqueEndpoint } from "../support/api.ts";
import { logEntriesOf } from "../support/log-entries.ts";
import { withSequencerEnv } from "../support/publication-sequencer.ts";
import { everyShard, inEveryShard, shardOfIdentity } from "../support/shards.ts";

const RESOLVER = "http://resolver.test";
const get = (path: string) => env.TEST_RESOLVER.fetch(`${RESOLVER}${path}`);

type Served = { size: number; rootHash: Uint8Array; time: string; leaves: Uint8Array[]; entries: LogEntry[] };

/**
 * The served checkpoint, verified with the served key, and the tree it names, read from served
 * tiles. Appends publish to KV in the background: first wait for the pass that covers them.
 */
async function served(): Promise<Served> {
  unwrap(await transparencyLog(env).publish());
  const keyAnswer = await get("/log/key");
  expect(keyAnswer.headers.get("content-type")).toMatch(/^text\/plain/);
  const key = await parseVerifierKey((await keyAnswer.text()).trimEnd());
  const answer = await get("/log/checkpoint");
  expect(answer.status).toBe(200);
  expect(answer.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  expect(answer.headers.get("cache-control")).toBe("public, max-age=5");
  const note = await verifyNote(await answer.text(), [key]);
  if (!note.ok) throw new Error(`checkpoint does not verify: ${note.reason}`);
  const checkpoint = parseCheckpoint(note.text);
  if (!checkpoint) throw new Error("checkpoint does not parse");
  expect(checkpoint.origin).toBe(env.LOG_ORIGIN);
  const [time] = checkpoint.extensions;
  expect(time).toMatch(/^time \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const tiles: Uint8Array[] = [];
  const entries: LogEntry[] = [];
  const bodies: Uint8Array[] = [];
  for (let n = 0; n * 256 < checkpoint.size; n++) {
    const width = Math.min(256, checkpoint.size - n * 256);
    const tile = await get(`/log/${hashTilePath(0, n, width)}`);
    expect(tile.status).toBe(200);
    expect(tile.headers.get("cache-control")).toBe(
      width === 256 ? "public, max-age=31536000, immutable" : "public, max-age=5",
    );
    tiles.push(new Uint8Array(await tile.arrayBuffer()));
    const bundle = await get(`/log/${entryTilePath(n, width)}`);
    expect(bundle.status).toBe(200);
    for (const bytes of decodeBundle(new Uint8Array(await bundle.arrayBuffer())) ?? []) {
      const entry = decodeEntry(bytes);
      if (!entry) throw new Error("entry does not decode");
      entries.push(entry);
      bodies.push(bytes);
    }
  }
  const leaves = leafHashesFromTiles(tiles) ?? [];
  expect(leaves.length).toBe(checkpoint.size);
  expect(entries.length).toBe(checkpoint.size);
  // Each leaf hash in the tiles is the hash of the entry at the same index in the bundles.
  const hashed = await Promise.all(bodies.map((body) => leafHash(body)));
  expect(hashed.every((hash, i) => sameHash(hash, leaves[i] as Uint8Array))).toBe(true);
  // The root re-derived from the served level-0 tiles is the signed one, and each leaf is its entry's.
  expect(sameHash(await rootFromLeafHashes(leaves), checkpoint.rootHash)).toBe(true);
  return { size: checkpoint.size, rootHash: checkpoint.rootHash, time: time ?? "", leaves, entries };
}

/** The record as served, with the log index it names. */
async function servedRecord(id: string) {
  const answer = await get(`/api/p/${id}.json`);
  expect(answer.status).toBe(200);
  const record = await answer.json<{ record_version: number; digest: string }>();
  return { ...record, logIndex: Number(answer.headers.get("passport-log-index")), answer };
}

/** Asserts the record's Passport-Log-Index names its own entry, included in the served checkpoint. */
async function expectLogged(id: string, log: Served) {
  const record = await servedRecord(id);
  const entry = log.entries[record.logIndex];
  expect(entry).toMatchObject({ identityId: id, recordVersion: record.record_version, digest: record.digest });
  const leaf = log.leaves[record.logIndex] as Uint8Array;
  const proof = await inclusionProof(record.logIndex, log.leaves);
  expect(await verifyInclusion(record.logIndex, log.size, leaf, proof, log.rootHash)).toBe(true);
  return record;
}

describe("transparency log", () => {
  it("logs every version of several passports; tiles, checkpoint, key and records agree", async () => {
    const admin = await Caller.create("admin");
    const ids: string[] = [];
    const checkpoints: Served[] = [];
    for (let i = 0; i < 3; i++) {
      const { identity_id: id } = await admin.createPassport({
        bindings: [{ class: "endpoint", value: uniqueEndpoint() }],
      });
      ids.push(id);
      const versions = [await expectLogged(id, await served())];
      for (const [path, body] of [
        [`/v1/passports/${id}`, { display_name: `Renamed ${i}` }],
        [`/v1/passports/${id}`, { display_name: `Renamed again ${i}` }],
        [`/v1/passports/${id}/state`, { lifecycle: "suspended" }],
      ] as const) {
        await admin.json("PATCH", path, body);
        versions.push(await expectLogged(id, await served()));
      }
      // Every version of the passport is in the latest tree, at the index its record named.
      const log = await served();
      checkpoints.push(log);
      expect(versions.map((v) => log.entries[v.logIndex]?.recordVersion)).toEqual([1, 2, 3, 4]);
      for (const version of versions) {
        const proof = await inclusionProof(version.logIndex, log.leaves);
        const leaf = log.leaves[version.logIndex] as Uint8Array;
        expect(await verifyInclusion(version.logIndex, log.size, leaf, proof, log.rootHash)).toBe(true);
      }
      const latest = await get(`/log/latest/${id}`);
      expect(latest.headers.get("cache-control")).toBe("public, max-age=5");
      expect(await latest.json()).toEqual({ identity_id: id, index: versions[3]?.logIndex, record_version: 4 });
    }
    // Each earlier checkpoint is a prefix of the last one (RFC 9162 consistency proofs from tiles).
    const after = await served();
    // The partial tile an earlier checkpoint named is still served, exactly as it was then.
    const earliest = checkpoints[0] as Served;
    const last = Math.floor((earliest.size - 1) / 256);
    const width = earliest.size - last * 256;
    if (width < 256) {
      const old = await get(`/log/${hashTilePath(0, last, width)}`);
      const leaves = leafHashesFromTiles([new Uint8Array(await old.arrayBuffer())]) ?? [];
      expect(leaves).toHaveLength(width);
      expect(leaves.every((leaf, i) => sameHash(leaf, earliest.leaves[last * 256 + i] as Uint8Array))).toBe(true);
      const bundle = await get(`/log/${entryTilePath(last, width)}`);
      expect(decodeBundle(new Uint8Array(await bundle.arrayBuffer()))).toHaveLength(width);
    }
    for (const before of checkpoints) {
      expect(before.size).toBeLessThanOrEqual(after.size);
      const proof = await consistencyProof(before.size, after.leaves);
      expect(await verifyConsistency(before.size, after.size, before.rootHash, after.rootHash, proof)).toBe(true);
    }
    // A 304 names the index too, and script may read it.
    const record = await servedRecord(ids[0] as string);
    const etag = record.answer.headers.get("etag") ?? "";
    const notModified = await env.TEST_RESOLVER.fetch(`${RESOLVER}/api/p/${ids[0]}.json`, {
      headers: { "if-none-match": etag },
    });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("passport-log-index")).toBe(String(record.logIndex));
    expect(record.answer.headers.get("access-control-expose-headers")).toContain("Passport-Log-Index");
  });

  it("serves full tiles as immutable and the level-1 tile over them, once 256 entries are in", async () => {
    const publishedAt = new Date().toISOString();
    unwrap(
      await transparencyLog(env).appendMany(
        Array.from({ length: 300 }, (_, i) => ({
          identity_id: mintIdentityId(),
          record_version: 1,
          digest: `sha-256:bulk-${i}`,
          published_at: publishedAt,
        })),
      ),
    );
    const log = await served(); // checks every level-0 tile's Cache-Control, full and partial
    expect(log.size).toBeGreaterThanOrEqual(300);
    const full = Math.floor(log.size / 256);
    const tile = await get(`/log/${hashTilePath(1, 0, full)}`);
    expect(tile.status).toBe(200);
    expect(tile.headers.get("cache-control")).toBe(
      full === 256 ? "public, max-age=31536000, immutable" : "public, max-age=5",
    );
    const level1 = leafHashesFromTiles([new Uint8Array(await tile.arrayBuffer())]) ?? [];
    expect(level1).toHaveLength(full);
    for (const [i, hash] of level1.entries()) {
      expect(sameHash(hash, await rootFromLeafHashes(log.leaves.slice(i * 256, (i + 1) * 256)))).toBe(true);
    }
    const bundle = await get(`/log/${entryTilePath(0)}`);
    expect(bundle.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  });

  it("answers problems for what the log does not hold", async () => {
    for (const path of [
      "/log/tile/0/x999/999",
      "/log/tile/entries/x999/000.p/3",
      "/log/tile/0/1",
      "/log/tile/0/000.p/256",
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.headers.get("content-type")).toBe("application/problem+json");
      expect((await answer.json<{ type: string }>()).type).toBe("urn:svc:passport:problem:log-not-found");
    }
    expect((await get(`/log/latest/${mintIdentityId()}`)).status).toBe(404);
    expect((await get("/log/latest/psp_nope")).status).toBe(400);
  });

  it("appends a retried publication once: sequencer retry, republish and a lost answer get the same index", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    // The snapshot write fails after the append: the outbox retry publishes the same version.
    const failingKv = {
      ...env.SNAPSHOTS,
      put: async () => {
        throw new Error("KV unavailable");
      },
      getWithMetadata: env.SNAPSHOTS.getWithMetadata.bind(env.SNAPSHOTS),
    } as unknown as KVNamespace;
    await withSequencerEnv(id, { SNAPSHOTS: failingKv }, () =>
      owner.json("PATCH", `/v1/passports/${id}`, { display_name: "During outage" }),
    );
    await drainOutbox(env, new Date(Date.now() + 3_600_000));
    const first = await expectLogged(id, await served());
    expect(first.record_version).toBe(2);
    // The log's answer was lost: D1 does not know the index, the append is asked again.
    const shard = await shardOfIdentity(id);
    await shard.prepare("UPDATE publications SET log_index = NULL WHERE passport_id = ?").bind(id).run();
    await shard
      .prepare(
        "INSERT INTO outbox (passport_id, record_version, attempts, next_attempt_at) VALUES (?, 2, 0, '2000-01-01T00:00:00Z')",
      )
      .bind(id)
      .run();
    await drainOutbox(env);
    await backfillLog(env, database(shard));
    expect((await expectLogged(id, await served())).logIndex).toBe(first.logIndex);
    expect((await logEntriesOf(id)).map((row) => row.record_version)).toEqual([1, 2]);
    const indexes = await shard
      .prepare("SELECT log_index FROM publications WHERE passport_id = ? ORDER BY seq")
      .bind(id)
      .all<{ log_index: number }>();
    expect(indexes.results.map((row) => row.log_index)).toEqual((await logEntriesOf(id)).map((row) => row.idx));

    // The same version with another digest is refused.
    const refused = await transparencyLog(env).append({
      identity_id: id,
      record_version: 2,
      digest: "sha-256:forged",
      published_at: new Date().toISOString(),
    });
    expect(refused).toEqual({ ok: false, error: expect.stringMatching(/another digest/) });
    expect(await logEntriesOf(id)).toHaveLength(2);
  });

  it("keeps an append whose KV writes failed and publishes it with the next pass", async () => {
    const stub = transparencyLog(env);
    type WithEnv = { env: LogEnv };
    let original: LogEnv | undefined;
    await runInDurableObject(stub, (instance) => {
      const log = instance as unknown as WithEnv;
      original = log.env;
      const down = { put: () => Promise.reject(new Error("KV unavailable")) } as unknown as KVNamespace;
      log.env = { ...original, SNAPSHOTS: down };
    });
    const id = mintIdentityId();
    let index: number;
    try {
      ({ index } = unwrap(
        await stub.append({
          identity_id: id,
          record_version: 1,
          digest: "sha-256:abc",
          published_at: new Date().toISOString(),
        }),
      ));
      expect(await stub.publish()).toEqual({ ok: false, error: expect.stringMatching(/KV unavailable/) });
      const sizes = await stub.sizes();
      expect(sizes.published).toBeLessThanOrEqual(index);
      expect(sizes.size).toBeGreaterThan(index);
    } finally {
      await runInDurableObject(stub, (instance) => {
        if (original) (instance as unknown as WithEnv).env = original;
      });
    }
    await maintainLog(env);
    const log = await served();
    expect(log.size).toBeGreaterThan(index);
    expect(log.entries[index]).toMatchObject({ identityId: id, recordVersion: 1, digest: "sha-256:abc" });
    expect(await (await get(`/log/latest/${id}`)).json()).toEqual({ identity_id: id, index, record_version: 1 });
  });

  it("backfill: appends unlogged publications in order, republishes their snapshots, and is resumable", async () => {
    // Publications made before the log existed: two synthetic passports' histories, interleaved...
    const [a, b] = [mintIdentityId(), mintIdentityId()];
    const rows: [string, number][] = [
      [a, 1],
      [b, 1],
      [a, 2],
      [b, 2],
      [a, 3],
    ];
    for (const [id, version] of rows) {
      await env.DB.prepare(
        "INSERT INTO publications (passport_id, record_version, digest, published_at, change_kinds) VALUES (?, ?, ?, ?, '[]')",
      )
        .bind(id, version, `sha-256:${id}-${version}`, "2026-01-01T00:00:00.000Z")
        .run();
    }
    // ...and a real passport whose snapshot was published without an index.
    const owner = await Caller.create("owner");
    const { identity_id: real } = await owner.createPassport();
    const logged = await servedRecord(real);
    const realShard = await shardOfIdentity(real);
    await realShard.prepare("UPDATE publications SET log_index = NULL WHERE passport_id = ?").bind(real).run();
    const snapshot = await env.SNAPSHOTS.getWithMetadata<SnapshotMetadata>(snapshotKey(real), "text");
    const { log_index: _dropped, ...withoutIndex } = snapshot.metadata as SnapshotMetadata;
    await env.SNAPSHOTS.put(snapshotKey(real), snapshot.value ?? "", { metadata: withoutIndex });
    expect((await get(`/api/p/${real}.json`)).headers.get("passport-log-index")).toBeNull();

    const lines: string[] = [];
    let cursor = "";
    // The backfill runs once per shard, as `npm run backfill-log` does (docs/sharding.md).
    const contextFor = (shard: D1Database): RepublishContext => ({
      query: async (sql) => (await shard.prepare(sql).all<Record<string, unknown>>()).results,
      cursor: { read: () => cursor, write: (value) => (cursor = value) },
      sleep: async () => {
        await maintainLog(env);
        await drainOutbox(env);
      },
      log: (line) => lines.push(line),
      pageSize: 50,
      lowWater: 0,
    });
    const backfillEveryShard = async () => {
      for (const shard of everyShard()) {
        cursor = "";
        await logBackfill(contextFor(shard));
      }
    };
    await backfillEveryShard();
    await drainOutbox(env);
    expect(lines.some((line) => line.startsWith("waiting:"))).toBe(true);

    const log = await served();
    const indexOf = async (id: string, version: number) =>
      (
        await (
          await shardOfIdentity(id)
        )
          .prepare("SELECT log_index FROM publications WHERE passport_id = ? AND record_version = ?")
          .bind(id, version)
          .first<{ log_index: number }>()
      )?.log_index ?? -1;
    const indexes = await Promise.all(rows.map(([id, version]) => indexOf(id, version)));
    // In publication order, each at the entry of its own id, version and digest.
    expect([...indexes].sort((x, y) => x - y)).toEqual(indexes);
    for (const [i, [id, version]] of rows.entries()) {
      expect(log.entries[indexes[i] as number]).toMatchObject({
        identityId: id,
        recordVersion: version,
        digest: `sha-256:${id}-${version}`,
      });
    }
    expect(await (await get(`/log/latest/${a}`)).json()).toEqual({
      identity_id: a,
      index: indexes[4],
      record_version: 3,
    });
    // The real passport kept the entry it had, and its snapshot names it again.
    expect((await expectLogged(real, log)).logIndex).toBe(logged.logIndex);

    // Twice: nothing new is appended.
    const sizeBefore = (await transparencyLog(env).sizes()).size;
    const ours = async () =>
      [...(await logEntriesOf(a)), ...(await logEntriesOf(b)), ...(await logEntriesOf(real))].length;
    const oursBefore = await ours();
    await backfillEveryShard();
    expect(await ours()).toBe(oursBefore);
    expect(await inEveryShard((db) => backfillLog(env, db))).toEqual(everyShard().map(() => 0));
    expect((await transparencyLog(env).sizes()).size).toBeGreaterThanOrEqual(sizeBefore);
    for (const shard of everyShard()) {
      cursor = "";
      await republishAll({ ...contextFor(shard), log: () => {} });
    }
  });
});

describe("the log writer's tree", () => {
  it("keeps roots and tile hashes equal to the reference implementation as it grows past a full tile", async () => {
    const leaves: Uint8Array[] = [];
    const edge: Uint8Array[] = [];
    const stored = new Map<string, Uint8Array>();
    for (let i = 0; i < 600; i++) {
      const leaf = writerLeafHash(new TextEncoder().encode(`entry ${i}`));
      expect(sameHash(leaf, await leafHash(new TextEncoder().encode(`entry ${i}`)))).toBe(true);
      leaves.push(leaf);
      for (const hash of appendLeaf(edge, i, leaf)) stored.set(`${hash.level}/${hash.index}`, hash.hash);
      if ([1, 2, 3, 255, 256, 257, 511, 512, 599].includes(i + 1)) {
        expect(sameHash(rootOfEdge(edge), await rootFromLeafHashes(leaves))).toBe(true);
      }
    }
    const reference = await hashTiles(leaves, rootFromLeafHashes);
    for (const { level, index, width } of changedTiles(0, 600)) {
      const tile = reference.get(hashTilePath(level, index, width)) as Uint8Array;
      for (let i = 0; i < width; i++) {
        const hash = stored.get(`${level}/${index * 256 + i}`) as Uint8Array;
        expect(sameHash(hash, tile.slice(i * 32, i * 32 + 32))).toBe(true);
      }
    }
    expect(
      changedTiles(0, 600)
        .map((t) => hashTilePath(t.level, t.index, t.width))
        .sort(),
    ).toEqual([...reference.keys()].sort());
    // Consistency proofs for a witness, from the stored tile hashes alone, equal the reference ones.
    const storedHash = (level: number, index: number) => stored.get(`${level}/${index}`) as Uint8Array;
    for (const [m, n] of [
      [1, 600],
      [255, 256],
      [256, 600],
      [257, 513],
      [300, 599],
      [599, 600],
    ] as const) {
      const reference = await consistencyProof(m, leaves.slice(0, n));
      const ours = consistencyPath(m, n, storedHash);
      expect(ours.length).toBe(reference.length);
      expect(ours.every((hash, i) => sameHash(hash, reference[i] as Uint8Array))).toBe(true);
    }
    // Growing from 300 to 520 rewrites the partial tile it extends and writes the one it completes once.
    expect(changedTiles(300, 520).map((t) => hashTilePath(t.level, t.index, t.width))).toEqual([
      "tile/0/001",
      "tile/0/002.p/8",
      "tile/1/000.p/2",
    ]);
  });

  it("formats the development log key exactly as the verifier's note code does", async () => {
    const { verifierKey } = await logKeyPair("passport.localhost/log");
    const parsed = await parseVerifierKey(verifierKey);
    expect(parsed.name).toBe("passport.localhost/log");
  });
});

describe("witness cosigning (C2SP tlog-witness)", () => {
  type WithEnv = { env: LogEnv };

  async function withWitnesses<T>(witnesses: unknown[], body: () => Promise<T>): Promise<T> {
    const stub = transparencyLog(env);
    let original: LogEnv | undefined;
    await runInDurableObject(stub, (instance) => {
      const log = instance as unknown as WithEnv;
      original = log.env;
      log.env = { ...original, LOG_WITNESSES: JSON.stringify(witnesses) };
    });
    try {
      return await body();
    } finally {
      await runInDurableObject(stub, (instance) => {
        if (original) (instance as unknown as WithEnv).env = original;
      });
    }
  }

  async function servedNote(keys: string[]) {
    unwrap(await transparencyLog(env).publish());
    const text = await (await get("/log/checkpoint")).text();
    return verifyNote(text, await Promise.all(keys.map((key) => parseVerifierKey(key))));
  }

  it("serves checkpoints the witness cosigned after checking consistency with the last one it saw", async () => {
    const host = `witness-${crypto.randomUUID().slice(0, 8)}.example.com`;
    const name = host;
    const keys = await logKeyPair(name);
    const registered = await env.OUTBOUND_SIMULATOR?.fetch(`https://hosts-sim.invalid/witness/${host}`, {
      method: "PUT",
      body: JSON.stringify({ name, private_jwk: keys.privateJwk, log_key: env.TEST_LOG_VERIFIER_KEY }),
    });
    expect(registered?.status).toBe(204);
    const witness = { name, key: keys.verifierKey, url: `https://${host}/` };
    const unreachable = {
      name: "gone.example.com",
      key: `gone.example.com+${keys.verifierKey.split("+").slice(1).join("+")}`,
      url: "https://gone.example.com/",
    };
    const owner = await Caller.create("owner");
    await withWitnesses([witness, unreachable], async () => {
      const { identity_id: id } = await owner.createPassport();
      const first = await servedNote([env.TEST_LOG_VERIFIER_KEY, keys.verifierKey]);
      expect(first).toMatchObject({ ok: true, signers: [env.LOG_ORIGIN, name] });
      expect(meetsWitnessQuorum(first.ok ? first.signers : [], env.LOG_ORIGIN, [name], 1)).toBe(true);
      // The next checkpoint comes with a consistency proof from the size the witness cosigned.
      await owner.json("PATCH", `/v1/passports/${id}`, { display_name: "Witnessed" });
      const second = await servedNote([env.TEST_LOG_VERIFIER_KEY, keys.verifierKey]);
      expect(second).toMatchObject({ ok: true, signers: [env.LOG_ORIGIN, name] });
      // Our record of the witness's size is wrong: its 409 names the right one, and the retry succeeds.
      await runInDurableObject(transparencyLog(env), (_instance, state) => {
        state.storage.sql.exec("UPDATE witnesses SET size = 1 WHERE name = ?", name);
      });
      await owner.json("PATCH", `/v1/passports/${id}`, { display_name: "Witnessed again" });
      const third = await servedNote([env.TEST_LOG_VERIFIER_KEY, keys.verifierKey]);
      expect(third).toMatchObject({ ok: true, signers: [env.LOG_ORIGIN, name] });
      const log = await served();
      expect((await servedRecord(id)).logIndex).toBeLessThan(log.size);
    });
    // Without witnesses configured, the checkpoint carries the log's signature alone.
    await maintainLog(env);
    const owner2 = await Caller.create("owner");
    await owner2.createPassport();
    const alone = await servedNote([env.TEST_LOG_VERIFIER_KEY, keys.verifierKey]);
    expect(alone).toMatchObject({ ok: true, signers: [env.LOG_ORIGIN] });
  });
});
