// `npm run bench -- verifier`: what checking a record's proof costs the consumer verifier per record,
// in Node: a full resolution with the signature checked against pinned keys, compared with the
// same resolution without keys (the digest is recomputed either way), and the proof check alone
// compared with parsing the record; then the transparency-log check (inclusion and newest version
// from cached tiles) compared with the same resolution without it, and the computed proof sizes at
// 10,000 and 1,000,000 entries. Answers come from memory, so only the verifier's work counts.
import { performance } from "node:perf_hooks";
import { canonicalBytes } from "@passport/domain";
import { CompactSign, importJWK } from "jose";
import { checkRecordProof, KeyRing, parseRecord, TileCache, Verifier } from "../../../packages/verifier/src/index.ts";
import { encodeBundle, encodeEntry } from "../../../packages/verifier/src/log/entry.ts";
import { leafHash, rootFromLeafHashes } from "../../../packages/verifier/src/log/merkle.ts";
import { formatCheckpoint, formatVerifierKey, signatureLine } from "../../../packages/verifier/src/log/note.ts";
import { chunkInclusionPath, consistencyPath, tileWidth } from "../../../packages/verifier/src/log/tile-proofs.ts";
import { entryTilePath, hashTilePath, hashTiles } from "../../../packages/verifier/src/log/tiles.ts";
import { signingKeyPair } from "../../dev-keys.mjs";
import { spread } from "../lib/compare.mjs";
import { sampleRecord } from "../lib/records.mjs";
import { policyPair, reportPolicy } from "./verifier-policy.mjs";

export const description =
  "verifier proof checks per record (signature, digest) against verification with the signature check skipped";

const RECORDS = 200;
const RESOLVER = "https://resolver.bench";
/** Entries in the benchmark's log; the sample records are its last ones, as fresh publications are. */
const LOG_SIZE = 10_000;
const LOG_ORIGIN = "resolver.bench/log";

/**
 * A log of LOG_SIZE entries whose last ones are the records' publications, served from memory:
 * checkpoint, tiles, bundles and the latest hint. Returns the log key and each record's index.
 */
async function benchLog(records) {
  const entries = [];
  for (let i = 0; entries.length < LOG_SIZE - records.length; i++) {
    entries.push({ identityId: `psp_other${i}`, recordVersion: 1, digest: `sha-256:other-${i}`, publishedAt: AT });
  }
  const indexOf = new Map();
  for (const r of records) {
    const record = JSON.parse(r.text);
    indexOf.set(r.id, entries.length);
    entries.push({
      identityId: r.id,
      recordVersion: record.record_version,
      digest: record.digest,
      publishedAt: record.published_at,
    });
  }
  const leaves = await Promise.all(entries.map((e) => leafHash(encodeEntry(e))));
  const served = await hashTiles(leaves, rootFromLeafHashes);
  for (let n = 0; n * 256 < entries.length; n++) {
    const bundle = entries.slice(n * 256, (n + 1) * 256).map(encodeEntry);
    served.set(entryTilePath(n, bundle.length), encodeBundle(bundle));
  }
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const key = await formatVerifierKey(LOG_ORIGIN, new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey)));
  const body = formatCheckpoint({
    origin: LOG_ORIGIN,
    size: entries.length,
    rootHash: await rootFromLeafHashes(leaves),
    extensions: [`time ${new Date().toISOString().replace(/\.\d{3}Z$/, "Z")}`],
  });
  const checkpoint = `${body}\n${await signatureLine(body, key, pair.privateKey)}`;
  const answer = (path) => {
    if (path === "/log/checkpoint") return new Response(checkpoint);
    if (path.startsWith("/log/latest/")) {
      const id = decodeURIComponent(path.slice("/log/latest/".length));
      return Response.json({ identity_id: id, index: indexOf.get(id), record_version: 3 });
    }
    const tile = served.get(path.slice("/log/".length));
    return tile ? new Response(tile) : new Response("not found", { status: 404 });
  };
  return { key, indexOf, answer };
}

const AT = "2026-10-20T09:00:00.000Z";

/** Hashes and tiles a proof needs in a tree of `size` entries, computed without building the tree. */
async function proofSize(size) {
  const count = async (prove) => {
    const tiles = new Set();
    const reader = {
      size,
      tile: async (level, n) => {
        const width = tileWidth(size, level, n);
        tiles.add(hashTilePath(level, n, width));
        return new Uint8Array(width * 32);
      },
    };
    const hashes = (await prove(reader)).length;
    return { hashes, bytes: hashes * 32, tiles: tiles.size };
  };
  return {
    entries: size,
    inclusion_first: await count((reader) => chunkInclusionPath(reader, 0, 0)),
    inclusion_last: await count((reader) => chunkInclusionPath(reader, 0, size - 1)),
    consistency_from_half: await count((reader) => consistencyPath(reader, Math.floor(size / 2) + 1)),
  };
}

async function signed(records) {
  const { publicJwk, privateJwk } = await signingKeyPair("ES256", "bench");
  const jwks = { keys: [JSON.parse(publicJwk)] };
  const privateKey = await importJWK(JSON.parse(privateJwk), "ES256");
  const out = [];
  for (const record of records) {
    const jws = await new CompactSign(canonicalBytes(record))
      .setProtectedHeader({ alg: "ES256", kid: "bench", typ: "passport+jws" })
      .sign(privateKey);
    const [header, , signature] = jws.split(".");
    out.push({ id: record.identity_id, text: JSON.stringify(record), signature: `${header}..${signature}` });
  }
  return { jwks, records: out };
}

/** Runs `op` over the records, one at a time, for `seconds`; returns per-record latencies (ms) and rate. */
async function measure(op, records, seconds) {
  const latencies = [];
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let i = 0;
  while (performance.now() < end) {
    const record = records[i++ % records.length];
    const t0 = performance.now();
    await op(record);
    latencies.push(performance.now() - t0);
  }
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99) };
}

export async function run({ options, log }) {
  log(`signing ${RECORDS} sample records`);
  const { jwks, records } = await signed(
    await Promise.all(Array.from({ length: RECORDS }, (_, n) => sampleRecord(n, `sha-256:${"A".repeat(43)}`))),
  );
  const byUrl = new Map(records.map((r) => [`${RESOLVER}/api/p/${r.id}.json`, r]));
  log(`building a log of ${LOG_SIZE} entries`);
  const logged = await benchLog(records);
  const fetch = async (url) => {
    const r = byUrl.get(url);
    if (!r) return logged.answer(new URL(url).pathname);
    return new Response(r.text, {
      headers: {
        "content-type": "application/json; charset=utf-8",
        "cache-control": "public, max-age=15",
        "passport-signature": r.signature,
        "passport-log-index": String(logged.indexOf.get(r.id)),
      },
    });
  };
  const keyed = new Verifier({ resolver: RESOLVER, fetch, jwks, cache: false });
  const withLog = new Verifier({
    resolver: RESOLVER,
    fetch,
    jwks,
    cache: false,
    log: { key: logged.key, maxAge: "1d", cache: new TileCache() },
  });
  const unkeyed = new Verifier({ resolver: RESOLVER, fetch, cache: false, signature: "skip-insecure" });
  const ring = new KeyRing(jwks);

  const expect = async (label, op, check) => {
    const result = await op(records[0]);
    if (!check(result)) throw new Error(`${label}: unexpected result ${JSON.stringify(result).slice(0, 300)}`);
  };
  const pairs = [
    {
      name: "resolve, signature checked",
      baseline: "resolve, signature skipped",
      subject: (r) => keyed.resolve(r.id, { consequence: "higher" }),
      reference: (r) => unkeyed.resolve(r.id, { consequence: "higher" }),
      checks: [(x) => x.proof?.signature === "verified", (x) => x.proof?.signature === "skipped_insecure"],
    },
    {
      name: "proof check (digest + signature)",
      baseline: "JSON.parse + parseRecord",
      subject: (r) => {
        const json = JSON.parse(r.text);
        return checkRecordProof(json, parseRecord(json).value, r.signature, ring);
      },
      reference: async (r) => parseRecord(JSON.parse(r.text)),
      checks: [(x) => x.ok && x.proof.signature === "verified", (x) => x.ok],
    },
    {
      name: "resolve + log (inclusion, newest)",
      baseline: "resolve, signature checked",
      subject: (r) => withLog.resolve(r.id, { consequence: "higher" }),
      reference: (r) => keyed.resolve(r.id, { consequence: "higher" }),
      checks: [(x) => x.proof?.log?.checkpoint.size === LOG_SIZE, (x) => x.proof?.signature === "verified"],
    },
    policyPair(keyed),
  ];
  for (const pair of pairs) {
    await expect(pair.name, pair.subject, pair.checks[0]);
    await expect(pair.baseline, pair.reference, pair.checks[1]);
    log(`warming up ${pair.name} and ${pair.baseline}`);
    await measure(pair.subject, records, options.warmup);
    await measure(pair.reference, records, options.warmup);
  }
  const runs = pairs.map(() => ({ subject: [], reference: [] }));
  for (let round = 0; round < options.rounds; round++) {
    log(`round ${round + 1} of ${options.rounds}`);
    for (const [i, pair] of pairs.entries()) {
      const order = (round + i) % 2 === 0 ? ["subject", "reference"] : ["reference", "subject"];
      for (const side of order) runs[i][side].push(await measure(pair[side], records, options.seconds));
    }
  }
  const results = pairs.map((pair, i) => {
    const { subject, reference } = runs[i];
    const ratio = (key) => spread(subject.map((s, r) => s[key] / reference[r][key]));
    const side = (list) => ({
      rps: spread(list.map((s) => s.rps)),
      p50: spread(list.map((s) => s.p50)),
      p99: spread(list.map((s) => s.p99)),
    });
    return {
      name: pair.name,
      baseline: pair.baseline,
      subject: side(subject),
      reference: side(reference),
      ratios: { rps: ratio("rps"), p50: ratio("p50"), p99: ratio("p99") },
    };
  });
  const proofSizes = [await proofSize(10_000), await proofSize(1_000_000)];
  for (const p of proofSizes) {
    const line = (what, c) => `${what} ${c.hashes} hashes (${c.bytes} bytes) from ${c.tiles} tiles`;
    console.log(
      `log proof sizes at ${p.entries.toLocaleString("en")} entries: ${line("inclusion of the first entry", p.inclusion_first)}, ` +
        `${line("of the last", p.inclusion_last)}; ${line("consistency from half the tree", p.consistency_from_half)}`,
    );
  }
  for (const r of results) {
    const us = (ms) => `${(ms * 1000).toFixed(0)} µs`;
    console.log(
      `verifier: ${r.name}: ${us(r.subject.p50.median)} per record (p50), ${us(1000 / r.subject.rps.median)} mean; ` +
        `${r.baseline}: ${us(r.reference.p50.median)} (p50), ${us(1000 / r.reference.rps.median)} mean`,
    );
  }
  reportPolicy(results);
  return { results, proof_sizes: proofSizes };
}
