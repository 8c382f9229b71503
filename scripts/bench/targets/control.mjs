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

const PASSPORTS = 10_000;
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

export async function run({ root, options, log }) {
  log("bundling the control plane and the resolver with wrangler deploy --dry-run");
  const control = bundle(root, { config: "workers/control/wrangler.toml", outdir: join(root, ".bench", "control") });
  const resolver = bundle(root, { config: "wrangler.toml", outdir: join(root, ".bench", "resolver") });
  const auth = await signingKeyPair("ES256", "bench");
  const signing = await signingKeyPair("ES256", "bench-signing");
  const server = await serve(
    {
      control: {
        modulePath: control.path,
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
