import { describe, expect, it } from "vitest";
import { encodeEntry } from "../../packages/protocol/src/log/entry.ts";
import {
  type FetchLike,
  LogClient,
  MemoryCheckpointStore,
  PROPAGATION_WINDOW_SECONDS,
  TileCache,
  type VerifyOutcome,
} from "../../packages/verifier/src/index.ts";
import { cosigner, LOG_ORIGIN, LOG_RESOLVER, LogResolver, noteSigner } from "./log-support.ts";
import { NOW, RecordServer } from "./support.ts";

/**
 * Three passports published in turns among other publications, over 600 entries: three entry
 * bundles (the last partial), a full and a partial level-0 tile, a partial level-1 tile.
 */
async function world() {
  const log = await LogResolver.create();
  const a1 = await log.publish();
  const a = a1.record.identity_id;
  log.filler(150);
  const b = (await log.publish()).record.identity_id;
  await log.publish(a);
  log.filler(200);
  const c = (await log.publish()).record.identity_id;
  await log.publish(b);
  await log.publish(a);
  log.filler(150);
  await log.publish(c);
  log.filler(92);
  await log.publish(b);
  return { log, a, b, c, ids: [a, b, c] };
}

const http = (fetch: FetchLike) => ({ fetch, timeoutMs: 5000, retries: 0, retryDelayMs: 1, maxBytes: 1 << 20 });

/** The same cosignature line with its timestamp moved by one second. */
function retimed(line: string): string {
  const [dash, name, encoded] = line.trimEnd().split(" ");
  const blob = Uint8Array.from(atob(encoded ?? ""), (c) => c.charCodeAt(0));
  const view = new DataView(blob.buffer);
  view.setBigUint64(4, view.getBigUint64(4) + 1n);
  return `${dash} ${name} ${btoa(String.fromCharCode(...blob))}\n`;
}

function logOf(result: VerifyOutcome) {
  if (result.outcome !== "ok") throw new Error(`expected ok, got ${result.outcome}: ${result.reason}`);
  return result.proof?.log;
}

describe("freshness by checkpoint: inclusion", () => {
  it("proves every version of several passports included at its index, and no other entry there", async () => {
    const { log, ids } = await world();
    expect(log.entries.length).toBe(600);
    const client = await LogClient.create({ base: LOG_RESOLVER, http: http(log.fetch), key: log.key.verifierKey });
    const signed = await client.checkpoint();
    if (!signed.ok) throw new Error(signed.problem);
    let proved = 0;
    for (const id of ids) {
      for (const version of log.published.get(id) ?? []) {
        const entry = log.entries[version.index];
        if (!entry) throw new Error("missing entry");
        expect(await client.proveInclusion(signed.checkpoint, version.index, encodeEntry(entry))).toBe(true);
        const replaced = encodeEntry({ ...entry, recordVersion: entry.recordVersion + 1 });
        expect(await client.proveInclusion(signed.checkpoint, version.index, replaced)).toBe(false);
        proved++;
      }
    }
    expect(proved).toBe(8);
  });

  it("verifies the newest version of each passport: ok, with the entry, checkpoint and bundles read", async () => {
    const { log, a, b, c } = await world();
    const verifier = log.verifier();
    const newestA = log.version(a, 3);
    const result = await verifier.verify(a, { family: "api" });
    expect(logOf(result)).toMatchObject({
      index: newestA.index,
      checkpoint: { origin: LOG_ORIGIN, size: 600, cosigners: [] },
      remembered: "not_kept",
      bundles_scanned: 2,
    });
    expect(logOf(await verifier.verify(c, { family: "api" }))?.bundles_scanned).toBe(2);
    // The last entry of the log: nothing after it to read.
    expect(logOf(await verifier.verify(b, { family: "api" }))).toMatchObject({ index: 599, bundles_scanned: 0 });
  });

  it("refuses a record whose entry is not at its index, is not in the checkpoint yet, or has no index", async () => {
    const { log, a, b } = await world();
    const verifier = log.verifier();
    // The resolver points at another passport's entry.
    const elsewhere: FetchLike = async (input, init) => {
      const response = await log.fetch(input, init);
      if (!input.endsWith(`${a}.json`)) return response;
      const headers = new Headers(response.headers);
      headers.set("passport-log-index", String(log.version(b, 1).index));
      return new Response(response.body, { headers });
    };
    expect(await log.verifier({}, { fetch: elsewhere }).verify(a)).toMatchObject({
      outcome: "not_in_log",
      kind: "not_included",
      next_step: "deny",
      relied_on: { identity_id: a, record_version: 3 },
    });
    const d = (await log.publish()).record.identity_id;
    log.serveCheckpoint({ size: 600 });
    expect(await verifier.verify(d)).toMatchObject({
      outcome: "not_in_log",
      kind: "beyond_checkpoint",
      index: 600,
      checkpoint_size: 600,
      next_step: "re-resolve",
    });
    log.withoutIndex = true;
    expect(await verifier.verify(a)).toMatchObject({ outcome: "not_in_log", kind: "no_index" });
  });

  it("refuses a checkpoint older than the bound the caller sets, or dated ahead of the clock", async () => {
    const { log, a } = await world();
    log.serveCheckpoint({ time: NOW - 2 * 3600_000 });
    const result = await log.verifier({ maxAge: "1h" }).verify(a);
    expect(result).toMatchObject({
      outcome: "checkpoint_stale",
      next_step: "re-resolve",
      max_age_seconds: 3600,
      checkpoint: { size: 600 },
    });
    // Checkpoint times are whole seconds.
    if (result.outcome === "checkpoint_stale") expect(Math.floor(result.checkpoint.age_seconds)).toBe(7200);
    expect((await log.verifier({ maxAge: "3h" }).verify(a)).outcome).toBe("ok");
    // Nor can a checkpoint dated ahead of the clock stay fresh past the bound.
    log.serveCheckpoint({ time: NOW + 3600_000 });
    expect(await log.verifier({ maxAge: "1h" }).verify(a)).toMatchObject({
      outcome: "checkpoint_invalid",
      kind: "future_time",
    });
    log.serveCheckpoint({ time: NOW + 60_000 });
    expect((await log.verifier({ maxAge: "1h" }).verify(a)).outcome).toBe("ok");
  });
});

describe("freshness by checkpoint: newest version", () => {
  it("catches a replayed old version served with a truncated history, through the latest hint", async () => {
    const { log, a } = await world();
    log.serving.set(a, 2);
    log.historyUpTo.set(a, 2);
    // Without the log, the replay is a validly signed record whose history ends at it.
    const unlogged = await log.verifier({}, { log: undefined }).verify(a, { family: "api" });
    expect(unlogged.outcome).toBe("ok");
    expect(await log.verifier().verify(a, { family: "api" })).toMatchObject({
      outcome: "not_newest",
      via: "hint",
      record_version: 2,
      newer_version: 3,
      newer_index: log.version(a, 3).index,
      next_step: "re-resolve",
      relied_on: { identity_id: a, record_version: 2 },
    });
  });

  it("calls the older record stale, not a replay, within the propagation window after the newer version", async () => {
    const { log, a } = await world();
    log.serving.set(a, 2);
    log.historyUpTo.set(a, 2);
    // Version 3's record may not have reached this location yet, while the log already has it.
    const newer = Date.parse(log.version(a, 3).record.published_at as string);
    log.serveCheckpoint({ time: newer + 10_000 });
    const at = (ms: number) => log.verifier({}, { now: () => ms }).verify(a, { family: "api" });
    expect(await at(newer + 10_000)).toMatchObject({
      outcome: "stale",
      next_step: "re-resolve",
      stale: [{ what: "propagation", lagging: "record", newer_version: 3 }],
      relied_on: { identity_id: a, record_version: 2 },
    });
    expect(await at(newer + (PROPAGATION_WINDOW_SECONDS + 1) * 1000)).toMatchObject({
      outcome: "not_newest",
      newer_version: 3,
    });
  });

  it("catches the replay by reading the bundles when the hint lies or is missing", async () => {
    const { log, a } = await world();
    log.serving.set(a, 1);
    log.historyUpTo.set(a, 1);
    log.hints.set(a, { index: log.version(a, 1).index, record_version: 1 });
    expect(await log.verifier().verify(a)).toMatchObject({
      outcome: "not_newest",
      via: "scan",
      record_version: 1,
      newer_version: 2,
      newer_index: log.version(a, 2).index,
    });
    log.hints.set(a, null);
    expect(await log.verifier().verify(a)).toMatchObject({ outcome: "not_newest", via: "scan" });
  });

  it("says so when the bundles to read exceed the bound, and reads nothing past the bound", async () => {
    const { log, a } = await world();
    expect(await log.verifier({ maxBundles: 1 }).verify(a)).toMatchObject({
      outcome: "newest_unverified",
      kind: "scan_limit",
      bundles_needed: 2,
      max_bundles: 1,
      next_step: "challenge",
    });
    expect((await log.verifier({ maxBundles: 2 }).verify(a)).outcome).toBe("ok");
  });
});

describe("freshness by checkpoint: newest version by a stapled status token", () => {
  /** A status token, signed with the record key at the log world's clock, naming `version` of `id` as current. */
  const token = (log: LogResolver, id: string, version: number) => {
    const { record } = log.version(id, version);
    const iat = Math.floor(NOW / 1000);
    return log.records.signStatus({
      identity_id: id,
      family: "api",
      lifecycle: "active",
      publication: "published",
      record_version: version,
      digest: record.digest,
      iat,
      exp: iat + 60,
    });
  };
  const reads = (log: LogResolver) => {
    const paths: string[] = [];
    const fetch: FetchLike = (input, init) => {
      paths.push(new URL(input).pathname);
      return log.fetch(input, init);
    };
    return { fetch, paths };
  };

  it("takes a token naming the record as current in place of the scan, and still proves inclusion", async () => {
    const { log, a } = await world();
    const newest = log.version(a, 3);
    const { fetch, paths } = reads(log);
    const result = await log
      .verifier({}, { fetch })
      .verify(a, { family: "api", consequence: "higher", statusToken: await token(log, a, 3) });
    expect(logOf(result)).toMatchObject({ index: newest.index, newest: "status_token", bundles_scanned: 0 });
    expect(result.proof?.status).toMatchObject({ source: "stapled", record_version: 3 });
    // Neither the latest hint nor a bundle was read; the inclusion proof's tiles were.
    expect(paths.filter((p) => p.startsWith("/log/latest/") || p.includes("/tile/entries/"))).toEqual([]);
    expect(paths.some((p) => p.startsWith("/log/tile/0/"))).toBe(true);
    // Without a token the same record is shown newest by the log.
    expect(logOf(await log.verifier().verify(a, { family: "api" }))).toMatchObject({
      newest: "log",
      bundles_scanned: 2,
    });
  });

  it("never clears a record the token does not name, nor one missing from the log", async () => {
    const { log, a } = await world();
    log.serving.set(a, 2);
    log.historyUpTo.set(a, 2);
    // The token names version 3: version 2 served as current is still caught by the scan.
    expect(
      await log.verifier().verify(a, { family: "api", consequence: "higher", statusToken: await token(log, a, 3) }),
    ).toMatchObject({ outcome: "not_newest", via: "hint", record_version: 2, newer_version: 3 });
    log.serving.delete(a);
    log.historyUpTo.delete(a);
    // Inclusion is not replaced: a record served without its log index is refused with a valid token.
    log.withoutIndex = true;
    expect(
      await log.verifier().verify(a, { family: "api", consequence: "higher", statusToken: await token(log, a, 3) }),
    ).toMatchObject({ outcome: "not_in_log", kind: "no_index" });
  });

  it("scans when the token's signature was not checked or it is not usable", async () => {
    const { log, a } = await world();
    const good = await token(log, a, 3);
    // Signatures skipped: the token's claims are read but not trusted to replace the scan.
    const insecure = await log
      .verifier({}, { jwks: undefined, signature: "skip-insecure" })
      .verify(a, { family: "api", consequence: "higher", statusToken: good });
    expect(insecure.proof?.log).toMatchObject({ newest: "log", bundles_scanned: 2 });
    // A token signed by another key: fetched again from the status route (absent here), and scanned.
    const other = await (await RecordServer.create()).signStatus({
      identity_id: a,
      family: "api",
      lifecycle: "active",
      publication: "published",
      record_version: 3,
      digest: log.version(a, 3).record.digest,
      iat: Math.floor(NOW / 1000),
      exp: Math.floor(NOW / 1000) + 60,
    });
    const forged = await log.verifier().verify(a, { family: "api", consequence: "higher", statusToken: other });
    expect(forged).toMatchObject({ outcome: "stale", proof: { log: { newest: "log", bundles_scanned: 2 } } });
  });
});

describe("freshness by checkpoint: remembered checkpoint", () => {
  /** A verifier remembering checkpoints, whose resolver the test swaps. */
  function remembering(start: LogResolver) {
    let current = start;
    let clock = NOW;
    const store = new MemoryCheckpointStore();
    const verifier = start.verifier(
      { store },
      { fetch: (input, init) => current.fetch(input, init), now: () => clock },
    );
    return { verifier, store, use: (log: LogResolver) => (current = log), setClock: (ms: number) => (clock = ms) };
  }

  it("accepts an extension, and refuses a rolled-back log once a lagging cache cannot explain it", async () => {
    const { log, a } = await world();
    log.serveCheckpoint({ size: 550 });
    const { verifier, store, setClock } = remembering(log);
    expect(logOf(await verifier.verify(a))?.remembered).toBe("first");
    log.serveCheckpoint({});
    expect(logOf(await verifier.verify(a))?.remembered).toBe("extended");
    expect(logOf(await verifier.verify(a))?.remembered).toBe("unchanged");
    expect(await store.load(LOG_ORIGIN)).toMatchObject({ size: 600 });
    log.serveCheckpoint({ size: 590 });
    // Within the propagation window after the remembered checkpoint was signed, another location's
    // copy may still be the older one: not yet, rather than a rollback (docs/freshness.md).
    expect(await verifier.verify(a)).toMatchObject({
      outcome: "stale",
      next_step: "re-resolve",
      stale: [{ what: "propagation", lagging: "log" }],
    });
    setClock(NOW + (PROPAGATION_WINDOW_SECONDS + 1) * 1000);
    expect(await verifier.verify(a)).toMatchObject({
      outcome: "rolled_back",
      remembered_size: 600,
      offered_size: 590,
      next_step: "deny",
    });
    expect(await store.load(LOG_ORIGIN)).toMatchObject({ size: 600 });
  });

  it("catches two checkpoints of the same size with different roots as a split view", async () => {
    const { log, a } = await world();
    const { verifier, use } = remembering(log);
    expect((await verifier.verify(a)).outcome).toBe("ok");
    const other = log.fork();
    other.entries[10] = { ...(other.entries[10] as (typeof other.entries)[number]), digest: "sha-256:another-history" };
    use(other);
    const result = await verifier.verify(a);
    expect(result).toMatchObject({ outcome: "split_view", size: 600, next_step: "deny" });
    if (result.outcome !== "split_view") return;
    expect(result.remembered_root).not.toBe(result.offered_root);
  });

  it("refuses a larger tree that rewrites the remembered one as inconsistent", async () => {
    const { log, a } = await world();
    log.serveCheckpoint({ size: 300 });
    log.serving.set(a, 2);
    const { verifier, use } = remembering(log);
    expect(logOf(await verifier.verify(a))).toMatchObject({ index: 152, remembered: "first" });
    const rewritten = log.fork();
    rewritten.entries[5] = { ...(rewritten.entries[5] as (typeof rewritten.entries)[number]), digest: "sha-256:x" };
    use(rewritten);
    expect(await verifier.verify(a)).toMatchObject({
      outcome: "inconsistent",
      remembered_size: 300,
      offered_size: 600,
    });
  });

  it("blames a tampered tile on the consistency proof's way, not a rewritten history", async () => {
    const { log, a } = await world();
    log.serveCheckpoint({ size: 300 });
    log.serving.set(a, 2);
    const { verifier } = remembering(log);
    expect((await verifier.verify(a)).outcome).toBe("ok");
    log.serveCheckpoint({});
    log.serving.delete(a);
    log.tampered.set("tile/0/001", new Uint8Array(256 * 32));
    expect(await verifier.verify(a)).toMatchObject({ outcome: "log_tampered", tile: "tile/0/001" });
    log.tampered.clear();
    expect(logOf(await verifier.verify(a))?.remembered).toBe("extended");
  });
});

describe("freshness by checkpoint: tiles and witnesses", () => {
  it("fails on a tampered tile or bundle, and never keeps a bad tile in the cache", async () => {
    const { log, a } = await world();
    const tiles = await log.tiles();
    const zeros = new Uint8Array(256 * 32);
    // The level-0 tile holding a's newest entry (index 355) is on its inclusion path.
    log.tampered.set("tile/0/001", zeros);
    expect(await log.verifier().verify(a)).toMatchObject({
      outcome: "log_tampered",
      tile: "tile/0/001",
      detail: "tile/0/001 does not hash to its entry in tile/1/000.p/2",
    });
    log.tampered.clear();
    // The last bundle is read to show no later version follows.
    const last = tiles.get("tile/entries/002.p/88") as Uint8Array;
    log.tampered.set(
      "tile/entries/002.p/88",
      last.map((byte, i) => (i === 40 ? byte ^ 1 : byte)),
    );
    expect(await log.verifier().verify(a)).toMatchObject({ outcome: "log_tampered", tile: "tile/entries/002.p/88" });
    log.tampered.clear();
    // A bad copy in a shared cache is dropped and fetched afresh.
    const cache = new TileCache();
    cache.set("tile/0/001", zeros);
    expect((await log.verifier({ cache }).verify(a)).outcome).toBe("ok");
    expect(cache.get("tile/0/001")).toEqual(tiles.get("tile/0/001"));
  });

  it("requires N witness cosignatures of the configured set", async () => {
    const { log, a } = await world();
    const [one, two] = [await noteSigner("witness-one.example"), await noteSigner("witness-two.example")];
    log.serveCheckpoint({ witnesses: [one] });
    const witnesses = [one.verifierKey, two.verifierKey];
    const met = await log.verifier({ witnesses, witnessQuorum: 1 }).verify(a);
    expect(logOf(met)?.checkpoint.cosigners).toEqual(["witness-one.example"]);
    expect(await log.verifier({ witnesses }).verify(a)).toMatchObject({
      outcome: "witness_quorum_unmet",
      required: 2,
      cosigners: ["witness-one.example"],
      next_step: "delay",
    });
    log.serveCheckpoint({ witnesses: [one, two] });
    expect((await log.verifier({ witnesses }).verify(a)).outcome).toBe("ok");
    // A cosignature line under a configured witness's name that does not verify is a forgery.
    const impostor = { ...(await noteSigner("witness-two.example")), verifierKey: two.verifierKey };
    log.serveCheckpoint({ witnesses: [one, impostor] });
    expect(await log.verifier({ witnesses, witnessQuorum: 1 }).verify(a)).toMatchObject({
      outcome: "checkpoint_invalid",
      kind: "bad_signature",
    });
  });

  it("counts C2SP cosignature/v1 witness lines toward the quorum, beside plain note witnesses", async () => {
    const { log, a } = await world();
    const [one, three] = [await noteSigner("witness-one.example"), await cosigner("witness-three.example")];
    const witnesses = [one.verifierKey, three.verifierKey];
    log.serveCheckpoint({ witnesses: [one], cosigners: [three] });
    const both = await log.verifier({ witnesses }).verify(a);
    expect(logOf(both)?.checkpoint.cosigners).toEqual(["witness-one.example", "witness-three.example"]);
    log.serveCheckpoint({ witnesses: [one] });
    expect(await log.verifier({ witnesses }).verify(a)).toMatchObject({
      outcome: "witness_quorum_unmet",
      cosigners: ["witness-one.example"],
    });
    // A pinned key whose hash does not match its name and key is the caller's mistake.
    const [, name, hash, key] = /^([^+]+)\+([0-9a-f]{8})\+(.+)$/.exec(three.verifierKey) ?? [];
    const wrongHash = `${name}+${hash === "00000000" ? "00000001" : "00000000"}+${key}`;
    await expect(log.verifier({ witnesses: [wrongHash] }).verify(a)).rejects.toThrow(/witness key hash does not match/);
    // A cosignature whose timestamp was changed after signing does not verify.
    const shifted = { ...three, sign: async (body: string, t: number) => retimed(await three.sign(body, t)) };
    log.serveCheckpoint({ cosigners: [shifted] });
    expect(await log.verifier({ witnesses, witnessQuorum: 1 }).verify(a)).toMatchObject({
      outcome: "checkpoint_invalid",
      kind: "bad_signature",
    });
  });

  it("refuses a checkpoint not signed by the pinned log key", async () => {
    const { log, a } = await world();
    log.serveCheckpoint({ signer: await noteSigner(LOG_ORIGIN) });
    expect(await log.verifier().verify(a)).toMatchObject({
      outcome: "checkpoint_invalid",
      kind: "not_signed_by_log",
      next_step: "deny",
    });
  });
});
