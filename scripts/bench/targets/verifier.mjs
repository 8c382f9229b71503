// `npm run bench -- verifier`: what checking a record's proof costs the consumer verifier per record,
// in Node: a full resolution with the signature checked against pinned keys, compared with the
// same resolution without keys (the digest is recomputed either way), and the proof check alone
// compared with parsing the record. Answers come from memory, so only the verifier's work counts.
import { performance } from "node:perf_hooks";
import { canonicalBytes } from "@passport/domain";
import { CompactSign, importJWK } from "jose";
import { checkRecordProof, KeyRing, parseRecord, Verifier } from "../../../packages/verifier/src/index.ts";
import { signingKeyPair } from "../../dev-keys.mjs";
import { spread } from "../lib/compare.mjs";
import { sampleRecord } from "../lib/records.mjs";

export const description =
  "verifier proof checks per record (signature, digest) against verification with the signature check skipped";

const RECORDS = 200;
const RESOLVER = "https://resolver.bench";

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
  const fetch = async (url) => {
    const r = byUrl.get(url);
    return new Response(r.text, {
      headers: {
        "content-type": "application/json; charset=utf-8",
        "cache-control": "public, max-age=15",
        "passport-signature": r.signature,
      },
    });
  };
  const keyed = new Verifier({ resolver: RESOLVER, fetch, jwks, cache: false });
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
  for (const r of results) {
    const us = (ms) => `${(ms * 1000).toFixed(0)} µs`;
    console.log(
      `verifier: ${r.name}: ${us(r.subject.p50.median)} per record (p50), ${us(1000 / r.subject.rps.median)} mean; ` +
        `${r.baseline}: ${us(r.reference.p50.median)} (p50), ${us(1000 / r.reference.rps.median)} mean`,
    );
  }
  return { results };
}
