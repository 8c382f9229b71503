// `npm run bench -- resolver`: the resolver bundle in workerd with seeded KV, each path against
// its own baseline (see scripts/bench/README.md for the method and docs/resolver.md for targets).
import { join } from "node:path";
import { mintIdentityId, snapshotKey } from "@passport/domain";
import { base64url } from "jose";
import { compatibilityDate } from "../../compatibility-date.ts";
import { comparePairs } from "../lib/compare.mjs";
import { sampleRecord } from "../lib/records.mjs";
import { bundle, serve } from "../lib/workers.mjs";

export const description = "resolver paths against a trivial Worker and a one-KV-get Worker; bundle size";

const RECORDS = 1000;
/**
 * The record route against its KV floor (issue 26: unchanged by the status route, at least 0.95
 * of a Worker that makes the same KV read): `kv-record.js` makes the resolver's getWithMetadata
 * and answers the record's headers, so the ratio is what the route adds (id check, dispatch,
 * conditional request). The same rows against a plain one-value KV get are reported beside them
 * without a target, as the earlier floor. Other rows keep the target's shared 0.9.
 */
const RECORD_TARGET = 0.95;
const GZIP_BUDGET = 60 * 1024;
// Published snapshots carry a detached JWS in their metadata, served as Passport-Signature; one of
// the real size (ES256 header with a kid, 64-byte signature) so the header costs what it will.
const SIGNATURE = `${base64url.encode('{"alg":"ES256","kid":"es256-bench000","typ":"passport+jws"}')}..${"A".repeat(86)}`;

async function seededRecord(n) {
  const record = await sampleRecord(n);
  return { id: record.identity_id, text: JSON.stringify(record), digest: record.digest };
}

export async function run({ root, options, log }) {
  const outdir = join(root, ".bench", "resolver");
  log("bundling the resolver with wrangler deploy --dry-run");
  const built = bundle(root, { config: "wrangler.toml", outdir });
  const server = await serve(
    {
      resolver: { modulePath: built.path, kv: "SNAPSHOTS", vars: { PUBLIC_BASE_URL: "http://127.0.0.1" } },
      trivial: { modulePath: join(root, "scripts/bench/baselines/trivial.js") },
      kv: { modulePath: join(root, "scripts/bench/baselines/kv-get.js"), kv: "KV" },
      kvRecord: { modulePath: join(root, "scripts/bench/baselines/kv-record.js"), kv: "KV" },
    },
    { compatibilityDate: compatibilityDate(root), compatibilityFlags: ["nodejs_compat"] },
  );
  try {
    log(`seeding ${RECORDS} records into each KV namespace`);
    const records = [];
    for (let n = 0; n < RECORDS; n++) records.push(await seededRecord(n));
    const snapshots = await server.kv("resolver");
    const baselineKv = await server.kv("kv");
    const recordKv = await server.kv("kvRecord");
    for (const [index, r] of records.entries()) {
      // As published: the log index travels in the metadata and is answered as Passport-Log-Index.
      const metadata = { digest: r.digest, record_version: 3, signature: SIGNATURE, log_index: index };
      await snapshots.put(snapshotKey(r.id), r.text, { metadata });
      await baselineKv.put(r.id, r.text);
      await recordKv.put(r.id, r.text, { metadata });
    }
    const one = records[0];
    const { resolver, trivial, kv, kvRecord } = server.urls;
    const trivialBaseline = { name: "trivial 1 KB JSON", urls: [`${trivial}/`], status: 200 };
    const kvOne = { name: "one KV get (same key)", urls: [`${kv}/${one.id}`], status: 200 };
    const kvMany = { name: "one KV get (1000 keys)", urls: records.map((r) => `${kv}/${r.id}`), status: 200 };
    const recordOne = { name: "KV read + record headers (same key)", urls: [`${kvRecord}/${one.id}`], status: 200 };
    const recordMany = {
      name: "KV read + record headers (1000 keys)",
      urls: records.map((r) => `${kvRecord}/${r.id}`),
      status: 200,
    };
    const recordOnce = { urls: [`${resolver}/api/p/${one.id}.json`], status: 200 };
    const recordSpread = { urls: records.map((r) => `${resolver}/api/p/${r.id}.json`), status: 200 };
    const pairs = [
      { name: "200 one record, repeated", subject: recordOnce, baseline: recordOne, target: RECORD_TARGET },
      { name: "200 spread over 1000 records", subject: recordSpread, baseline: recordMany, target: RECORD_TARGET },
      {
        name: "200 spread, against a plain KV get (earlier floor)",
        subject: recordSpread,
        baseline: kvMany,
        reportOnly: true,
      },
      {
        name: "404 well-formed unknown id",
        subject: { urls: [`${resolver}/api/p/${mintIdentityId()}.json`], status: 404 },
        baseline: kvOne,
      },
      {
        name: "400 malformed id",
        // The check character changed (to another one, whatever the id's own was): a 400.
        subject: {
          urls: [`${resolver}/api/p/${one.id.slice(0, -1)}${one.id.endsWith("x") ? "y" : "x"}.json`],
          status: 400,
        },
        baseline: trivialBaseline,
      },
      {
        name: "304 conditional (If-None-Match)",
        subject: {
          urls: [`${resolver}/api/p/${one.id}.json`],
          headers: { "if-none-match": `"${one.digest}"` },
          status: 304,
        },
        baseline: kvOne,
      },
    ];
    const results = comparePairs(pairs, { ...options, log, cpu: server.cpu });
    return {
      results,
      bundle: { raw: built.raw, gzip: built.gzip, budget: GZIP_BUDGET },
      targets: { rps: 0.9, p99: 1.2 },
    };
  } finally {
    await server.close();
  }
}
