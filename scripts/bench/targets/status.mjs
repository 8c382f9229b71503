// `npm run bench -- status`: the status route (docs/freshness.md, Status token) in the resolver
// bundle, asking the real PublicationSequencer of the control plane bundle (real local D1, the
// record key), against a Worker that makes one Durable Object call and nothing else
// (scripts/bench/baselines/do-call.js). Target: 0.9 of the reference's requests/s.
import { join } from "node:path";
import { mintIdentityId } from "@passport/domain";
import { compatibilityDate } from "../../compatibility-date.ts";
import { logKeyPair, signingKeyPair } from "../../dev-keys.mjs";
import { comparePairs } from "../lib/compare.mjs";
import { controlVars, LOG_ORIGIN } from "../lib/control-vars.mjs";
import { applyMigrations, ORGANISATION, seedOrganisation } from "../lib/migrations.mjs";
import { bundle, serve } from "../lib/workers.mjs";

export const description = "the status route (one sequencer call) against a Worker making one Durable Object call";

const PASSPORTS = 100;
/**
 * The route limits each client address (`STATUS_PER_CLIENT`; a request that crossed the edge
 * always names one). The limit is bound as deployed but generously, so a refusal never happens.
 * Locally the limiter is Miniflare's simulation, itself a Durable Object reached by a fetch, which
 * costs far more than the per-location counter of production (reference/platform-facts: "held
 * locally"), so the limited row is compared with a reference making the same limiter call.
 */
const CLIENT = { "cf-connecting-ip": "198.51.100.7" };
const LIMIT = { type: "rate-limit", namespace: "1102", simple: { limit: 1_000_000_000, period: 60 } };
/**
 * Seconds of untimed load before each run: workerd evicts an idle Durable Object after about ten
 * seconds, so without it every run of a spread row began with 100 objects to build again (a D1
 * read and a signature each for the sequencer), about 0.1-0.6 ms of CPU per request on average
 * that a passport in steady use does not pay. Both sides are primed alike.
 */
const PRIME = 1;
const DIGEST = `sha-256:${"A".repeat(43)}`;

async function prepare(db, root, ids) {
  await applyMigrations(db, root);
  const at = new Date().toISOString();
  await seedOrganisation(db);
  // Published passports: version 1 committed, and its publication recorded as written to KV.
  await db.batch(
    ids.flatMap((id) => [
      db
        .prepare(
          "INSERT INTO passports (id, organisation_id, family, state_as_of, updated_at) VALUES (?, ?, 'api', ?, ?)",
        )
        .bind(id, ORGANISATION, at, at),
      db
        .prepare(
          "INSERT INTO publications (passport_id, record_version, digest, published_at, change_kinds, written_at) VALUES (?, 1, ?, ?, '[]', ?)",
        )
        .bind(id, DIGEST, at, at),
    ]),
  );
}

export async function run({ root, options, log }) {
  log("bundling the control plane and the resolver with wrangler deploy --dry-run");
  const control = bundle(root, { config: "workers/control/wrangler.toml", outdir: join(root, ".bench", "control") });
  const resolver = bundle(root, { config: "wrangler.toml", outdir: join(root, ".bench", "resolver") });
  const signing = await signingKeyPair("ES256", "bench-signing");
  const vars = controlVars({
    auth: await signingKeyPair("ES256", "bench"),
    signing,
    logKeys: await logKeyPair(LOG_ORIGIN),
  });
  const server = await serve(
    {
      control: {
        modulePath: control.path,
        kv: "SNAPSHOTS",
        vars,
        bindings: {
          DB: { type: "d1", id: "status-db" },
          PUBLICATION_SEQUENCER: { type: "durable-object", worker: "control", exportName: "PublicationSequencer" },
        },
        exports: { PublicationSequencer: { type: "durable-object", storage: "sqlite" } },
      },
      resolver: {
        modulePath: resolver.path,
        kv: "SNAPSHOTS",
        vars: { PUBLIC_BASE_URL: "http://127.0.0.1" },
        bindings: {
          PUBLICATION_SEQUENCER: { type: "durable-object", worker: "control", exportName: "PublicationSequencer" },
          STATUS_PER_CLIENT: LIMIT,
        },
      },
      reference: {
        modulePath: join(root, "scripts/bench/baselines/do-call.js"),
        bindings: {
          OBJECT: { type: "durable-object", worker: "reference", exportName: "Reference" },
          LIMIT: { ...LIMIT, namespace: "1103" },
        },
        exports: { Reference: { type: "durable-object", storage: "sqlite" } },
      },
    },
    { compatibilityDate: compatibilityDate(root), compatibilityFlags: ["nodejs_compat"] },
  );
  try {
    const ids = Array.from({ length: PASSPORTS }, () => mintIdentityId());
    log(`applying the D1 migrations and seeding ${PASSPORTS} published passports`);
    await prepare(await server.d1("control", "DB"), root, ids);
    const { resolver: r, reference } = server.urls;
    const probe = await fetch(`${r}/api/p/${ids[0]}/status`, { headers: CLIENT });
    if (probe.status !== 200) throw new Error(`the status route answered ${probe.status}: ${await probe.text()}`);
    const pairs = [
      {
        name: "200 status token, one passport repeated",
        subject: { urls: [`${r}/api/p/${ids[0]}/status`], status: 200, prime: PRIME },
        baseline: { name: "one DO call (same object)", urls: [`${reference}/${ids[0]}`], status: 200, prime: PRIME },
      },
      {
        name: `200 status token, spread over ${PASSPORTS} passports`,
        subject: { urls: ids.map((id) => `${r}/api/p/${id}/status`), status: 200, prime: PRIME },
        baseline: {
          name: `one DO call (${PASSPORTS} objects)`,
          urls: ids.map((id) => `${reference}/${id}`),
          status: 200,
          prime: PRIME,
        },
      },
      {
        name: `200 status token, ${PASSPORTS} passports, client address limited`,
        subject: { urls: ids.map((id) => `${r}/api/p/${id}/status`), headers: CLIENT, status: 200, prime: PRIME },
        baseline: {
          name: "one limiter call + one DO call",
          urls: ids.map((id) => `${reference}/${id}`),
          headers: CLIENT,
          status: 200,
          prime: PRIME,
        },
      },
    ];
    return { results: comparePairs(pairs, { ...options, log, cpu: server.cpu }), targets: { rps: 0.9, p99: 1.2 } };
  } finally {
    await server.close();
  }
}
