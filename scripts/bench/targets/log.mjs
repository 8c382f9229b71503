// `npm run bench -- log`: what the transparency log adds to a publication. The control plane bundle
// runs twice in one workerd, each with real local D1 and KV, its publication sequencer and the
// resolver: once with the real TransparencyLog object (append, tiles, bundles, hint and a signed
// checkpoint to KV per publication), once with a stand-in object that only hands out indexes
// (scripts/bench/baselines/no-log.js). Both answer the same create-and-publish request; the ratio
// is the log's cost per publication. Also prints proof sizes at 10,000 and 1,000,000 entries,
// computed (RFC 9162 paths, tiles of 256).
import { join } from "node:path";
import { DEVELOPMENT_ISSUER } from "@passport/domain";
import { importJWK, SignJWT } from "jose";
import { compatibilityDate } from "../../compatibility-date.ts";
import { logKeyPair, signingKeyPair } from "../../dev-keys.mjs";
import { comparePairs } from "../lib/compare.mjs";
import { controlVars, LOG_ORIGIN } from "../lib/control-vars.mjs";
import { applyMigrations, ORGANISATION, SUBJECT, seedOrganisation } from "../lib/migrations.mjs";
import { bundle, serve } from "../lib/workers.mjs";

export const description = "create-and-publish with the transparency log against the same with the log stubbed";

/** The control plane's rate limits (workers/control/wrangler.toml), none of which may refuse here. */
const LIMITS = [
  "FULFILL_PER_CLIENT",
  "FULFILL_CEILING",
  "EVENTS_PER_CLIENT",
  "SIGN_IN_PER_CLIENT",
  "CLAIMS_PER_SUBJECT",
  "WRITES_PER_SUBJECT",
  "CHECKS_PER_SUBJECT",
  "PUBLIC_READS_PER_CLIENT",
];

async function prepare(db, root) {
  await applyMigrations(db, root);
  await seedOrganisation(db);
}

/** Length of PATH(m, D[n]) (RFC 9162 §2.1.3.1), without hashing. */
function inclusionLength(m, n) {
  if (n <= 1) return 0;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return 1 + (m < k ? inclusionLength(m, k) : inclusionLength(m - k, n - k));
}

/** Length of PROOF(m, D[n]) (RFC 9162 §2.1.4.1), without hashing. */
function consistencyLength(m, n, complete = true) {
  if (m === n) return complete ? 0 : 1;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return 1 + (m <= k ? consistencyLength(m, k, complete) : consistencyLength(m - k, n - k, false));
}

function proofSizes(log) {
  for (const n of [10_000, 1_000_000]) {
    let inclusion = 0;
    for (const m of [0, n - 1, Math.floor(n / 2), 255, n - 257]) inclusion = Math.max(inclusion, inclusionLength(m, n));
    let consistency = 0;
    for (const m of [1, 3, 255, 257, Math.floor(n / 3), n - 1])
      consistency = Math.max(consistency, consistencyLength(m, n));
    let levels = 0;
    for (let span = 1; span <= n; span *= 256) levels++;
    log(
      `proof sizes at ${n.toLocaleString("en")} entries: inclusion ${inclusion} hashes (${inclusion * 32} bytes), ` +
        `consistency up to ${consistency} hashes (${consistency * 32} bytes); from tiles: ${levels} tile levels, ` +
        `one tile (at most 8 KiB) per level`,
    );
    console.log(
      `log: proof sizes at ${n}: inclusion ${inclusion} hashes / ${inclusion * 32} B; consistency <= ${consistency} hashes / ${consistency * 32} B; ${levels} tiles per proof`,
    );
  }
}

export async function run({ root, options, log }) {
  proofSizes(log);
  log("bundling the control plane and the resolver with wrangler deploy --dry-run");
  const control = bundle(root, { config: "workers/control/wrangler.toml", outdir: join(root, ".bench", "control") });
  const resolver = bundle(root, { config: "wrangler.toml", outdir: join(root, ".bench", "resolver") });
  const auth = await signingKeyPair("ES256", "bench");
  const signing = await signingKeyPair("ES256", "bench-signing");
  const logKeys = await logKeyPair(LOG_ORIGIN);
  const controlWith = (name, logBinding) => ({
    modulePath: control.path,
    kv: "SNAPSHOTS",
    vars: controlVars({ auth, signing, logKeys }),
    bindings: {
      DB: { type: "d1", id: `${name}-db` },
      RESOLVER: { type: "worker", worker: "resolver", exportName: "ResolverAdmin" },
      PUBLICATION_SEQUENCER: { type: "durable-object", worker: name, exportName: "PublicationSequencer" },
      TRANSPARENCY_LOG: logBinding,
      ...Object.fromEntries(
        LIMITS.map((limit) => [limit, { type: "worker", worker: "logStandIn", exportName: "Unlimited" }]),
      ),
    },
    exports: {
      PublicationSequencer: { type: "durable-object", storage: "sqlite" },
      TransparencyLog: { type: "durable-object", storage: "sqlite" },
    },
  });
  const server = await serve(
    {
      withLog: controlWith("withLog", { type: "durable-object", worker: "withLog", exportName: "TransparencyLog" }),
      noLog: controlWith("noLog", { type: "durable-object", worker: "logStandIn", exportName: "NoLog" }),
      logStandIn: {
        modulePath: join(root, "scripts/bench/baselines/no-log.js"),
        exports: { NoLog: { type: "durable-object", storage: "sqlite" } },
      },
      resolver: { modulePath: resolver.path, kv: "SNAPSHOTS", vars: { PUBLIC_BASE_URL: "http://127.0.0.1" } },
    },
    { compatibilityDate: compatibilityDate(root), compatibilityFlags: ["nodejs_compat"] },
  );
  try {
    log("applying the D1 migrations");
    for (const name of ["withLog", "noLog"]) await prepare(await server.d1(name, "DB"), root);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "bench" })
      .setIssuer(DEVELOPMENT_ISSUER)
      .setAudience("passport-dashboard")
      .setSubject(SUBJECT)
      .setExpirationTime("2h")
      .sign(await importJWK(JSON.parse(auth.privateJwk), "ES256"));
    const request = (url) => ({
      urls: [`${url}/v1/passports`],
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ family: "api", organisation_id: ORGANISATION, display_name: "Bench API" }),
      status: 201,
    });
    // Each answer must be a published record, or a failed publication could look cheap.
    for (const name of ["withLog", "noLog"]) {
      const { urls, headers, body } = request(server.urls[name]);
      const created = await (await fetch(urls[0], { method: "POST", headers, body })).json();
      if (created.publication?.status !== "published") {
        throw new Error(`${name}: create did not publish: ${JSON.stringify(created).slice(0, 300)}`);
      }
    }
    const pairs = [
      {
        name: "create and publish, with the log",
        subject: request(server.urls.withLog),
        baseline: { name: "the same, log stubbed", ...request(server.urls.noLog) },
      },
    ];
    return { results: comparePairs(pairs, { ...options, log, cpu: server.cpu }) };
  } finally {
    await server.close();
  }
}
