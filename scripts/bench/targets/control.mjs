// `npm run bench -- control`: the control plane bundle in workerd with real local D1 and KV and the
// resolver beside it, for create-and-publish and for listing a page out of 10,000 passports, each
// against the storage floor of the same work (scripts/bench/README.md).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DEVELOPMENT_ISSUER, mintIdentityId } from "@passport/domain";
import { importJWK, SignJWT } from "jose";
import { compatibilityDate } from "../../compatibility-date.ts";
import { signingKeyPair } from "../../dev-keys.mjs";
import { comparePairs } from "../lib/compare.mjs";
import { bundle, serve } from "../lib/workers.mjs";

export const description = "control plane create-and-publish and list at 10,000 passports against D1/KV floors";

const PASSPORTS = Number(process.env.BENCH_PASSPORTS ?? 10_000);
const ORGANISATION = "org_bench";
const SUBJECT = "bench-owner";

async function applyMigrations(db, root) {
  const dir = join(root, "migrations");
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    for (const statement of readFileSync(join(dir, file), "utf8").split("--> statement-breakpoint")) {
      if (statement.trim()) await db.prepare(statement).run();
    }
  }
}

/** Inserts `count` passports (and matching baseline rows) in chunks, directly in D1. */
async function seed(controlDb, baselineDb, count) {
  await controlDb.batch([
    controlDb.prepare("INSERT INTO organisations (id, name) VALUES (?, 'Bench Organisation')").bind(ORGANISATION),
    controlDb
      .prepare("INSERT INTO members (organisation_id, subject, role) VALUES (?, ?, 'owner')")
      .bind(ORGANISATION, SUBJECT),
  ]);
  await baselineDb
    .prepare(
      "CREATE TABLE baseline_rows (id TEXT PRIMARY KEY, organisation_id TEXT NOT NULL DEFAULT 'org_bench', family TEXT NOT NULL DEFAULT 'api', display_name TEXT, lifecycle TEXT NOT NULL DEFAULT 'active', environment TEXT, record_version INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL, updated_at TEXT)",
    )
    .run();
  await baselineDb
    .prepare("CREATE INDEX baseline_rows_org_created ON baseline_rows (organisation_id, created_at, id)")
    .run();
  const start = Date.parse("2026-01-01T00:00:00.000Z");
  for (let offset = 0; offset < count; offset += 500) {
    const passports = [];
    const rows = [];
    for (let n = offset; n < Math.min(count, offset + 500); n++) {
      const at = new Date(start + n * 1000).toISOString();
      const id = mintIdentityId();
      const environment = n % 2 ? "staging" : "production";
      passports.push(
        controlDb
          .prepare(
            "INSERT INTO passports (id, organisation_id, family, display_name, environment, state_as_of, created_at, updated_at) VALUES (?, ?, 'api', ?, ?, ?, ?, ?)",
          )
          .bind(id, ORGANISATION, `API ${n}`, environment, at, at, at),
      );
      rows.push(
        baselineDb
          .prepare(
            "INSERT INTO baseline_rows (id, display_name, environment, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
          )
          .bind(id, `API ${n}`, environment, at, at),
      );
    }
    await controlDb.batch(passports);
    await baselineDb.batch(rows);
  }
}

/**
 * Makes each write route's request once, on passports created for it, and returns the D1 round
 * trips and statements and the KV operations each made (counted by the bench wrapper around the
 * bundle, scripts/bench/workers/counting-control.js), publication by the sequencer included.
 */
async function countWrites(api, authorization) {
  const json = { ...authorization, "content-type": "application/json" };
  const call = async (method, path, body, status) => {
    await fetch(`${api}/__bench/counts`);
    const response = await fetch(`${api}${path}`, { method, headers: json, body: JSON.stringify(body) });
    if (response.status !== status) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    const answer = await response.json();
    if (answer.publication && answer.publication.status !== "published") {
      throw new Error(`${method} ${path} did not publish: ${JSON.stringify(answer.publication)}`);
    }
    return { answer, counts: await (await fetch(`${api}/__bench/counts`)).json() };
  };
  const unique = () => crypto.randomUUID().slice(0, 8);
  const create = (bindings) =>
    call(
      "POST",
      "/v1/passports",
      { family: "api", organisation_id: ORGANISATION, display_name: "Count", bindings },
      201,
    );
  const rows = [];
  const plain = await create([]);
  rows.push(["create", plain.counts]);
  const bound = await create([{ class: "endpoint", value: `https://count-${unique()}.bench.example/` }]);
  rows.push(["create with an endpoint binding", bound.counts]);
  const id = plain.answer.identity_id;
  rows.push([
    "PATCH display name",
    (await call("PATCH", `/v1/passports/${id}`, { display_name: "Renamed" }, 200)).counts,
  ]);
  rows.push([
    "state change",
    (await call("PATCH", `/v1/passports/${id}/state`, { environment: "staging" }, 200)).counts,
  ]);
  rows.push([
    "binding add",
    (
      await call(
        "POST",
        `/v1/passports/${id}/bindings`,
        { class: "endpoint", value: `https://count-${unique()}.bench.example/` },
        200,
      )
    ).counts,
  ]);
  const evidence = { claim: "owner", source: "Bench", scope: "all", observed_at: new Date().toISOString() };
  rows.push(["evidence add", (await call("POST", `/v1/passports/${id}/evidence`, evidence, 200)).counts]);
  return rows;
}

export async function run({ root, options, log }) {
  log("bundling the control plane and the resolver with wrangler deploy --dry-run");
  const control = bundle(root, { config: "workers/control/wrangler.toml", outdir: join(root, ".bench", "control") });
  const resolver = bundle(root, { config: "wrangler.toml", outdir: join(root, ".bench", "resolver") });
  const auth = await signingKeyPair("ES256", "bench");
  const signing = await signingKeyPair("ES256", "bench-signing");
  const server = await serve(
    {
      control: {
        modulePath: join(root, "scripts/bench/workers/counting-control.js"),
        modules: { "control.js": control.path },
        exports: { PublicationSequencer: { type: "durable-object", storage: "sqlite" } },
        kv: "SNAPSHOTS",
        vars: {
          ENVIRONMENT: "development",
          RESOLVER_BASE_URL: "http://127.0.0.1",
          AUTH_ISSUER: "https://issuer.invalid/",
          AUTH_AUDIENCE: "passport-dashboard",
          AUTH_JWKS_URL: "https://issuer.invalid/.well-known/jwks.json",
          DEV_AUTH_PUBLIC_JWK: auth.publicJwk,
          SIGNING_KEY: signing.privateJwk,
        },
        bindings: {
          DB: { type: "d1", id: "control-db" },
          RESOLVER: { type: "worker", worker: "resolver", exportName: "ResolverAdmin" },
          PUBLICATION_SEQUENCER: { type: "durable-object", worker: "control", exportName: "PublicationSequencer" },
          // Generous: the bench measures the routes, not the per-subject write limit.
          WRITES_PER_SUBJECT: { type: "rate-limit", namespace: "1006", simple: { limit: 1_000_000_000, period: 60 } },
        },
      },
      resolver: { modulePath: resolver.path, kv: "SNAPSHOTS", vars: { PUBLIC_BASE_URL: "http://127.0.0.1" } },
      publishFloor: {
        modulePath: join(root, "workers/bench-baselines/d1-write-kv-put.js"),
        kv: "KV",
        bindings: { DB: { type: "d1", id: "baseline-db" } },
      },
      pageFloor: {
        modulePath: join(root, "workers/bench-baselines/d1-page.js"),
        bindings: { DB: { type: "d1", id: "baseline-db" } },
      },
    },
    { compatibilityDate: compatibilityDate(root), compatibilityFlags: ["nodejs_compat"] },
  );
  try {
    const controlDb = await server.d1("control", "DB");
    const baselineDb = await server.d1("pageFloor", "DB");
    log("applying the D1 migrations");
    await applyMigrations(controlDb, root);
    log(`seeding ${PASSPORTS} passports`);
    await seed(controlDb, baselineDb, PASSPORTS);
    // No org/role claims: the membership is already in D1, so no request writes it again.
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "bench" })
      .setIssuer(DEVELOPMENT_ISSUER)
      .setAudience("passport-dashboard")
      .setSubject(SUBJECT)
      .setExpirationTime("2h")
      .sign(await importJWK(JSON.parse(auth.privateJwk), "ES256"));
    const authorization = { authorization: `Bearer ${token}` };
    const { control: api, publishFloor, pageFloor } = server.urls;
    const counts = await countWrites(api, authorization);
    for (const [route, c] of counts) log(`${route}: ${JSON.stringify(c)}`);
    if (process.env.BENCH_COUNTS_ONLY) return { results: [], counts };
    const pairs = [
      {
        name: "create and publish (POST /v1/passports)",
        subject: {
          urls: [`${api}/v1/passports`],
          headers: { ...authorization, "content-type": "application/json" },
          body: JSON.stringify({ family: "api", organisation_id: ORGANISATION, display_name: "Bench API" }),
          status: 201,
        },
        baseline: { name: "D1 insert + KV put", urls: [`${publishFloor}/`], body: "{}", status: 201 },
      },
      {
        name: `list first page of ${PASSPORTS} (GET /v1/passports?limit=50)`,
        subject: {
          urls: [`${api}/v1/passports?organisation_id=${ORGANISATION}&limit=50`],
          headers: authorization,
          status: 200,
        },
        baseline: { name: "D1 page of 50", urls: [`${pageFloor}/`], status: 200 },
      },
      {
        name: `list filtered by environment (${PASSPORTS})`,
        subject: {
          urls: [`${api}/v1/passports?organisation_id=${ORGANISATION}&environment=staging&limit=50`],
          headers: authorization,
          status: 200,
        },
        baseline: { name: "D1 page of 50", urls: [`${pageFloor}/`], status: 200 },
      },
    ];
    return { results: comparePairs(pairs, { ...options, log }) };
  } finally {
    await server.close();
  }
}
