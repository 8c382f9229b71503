// `npm start`: the whole service on this machine. Applies the D1 migrations, then runs the
// resolver, the control plane, the marketplace simulator and the hosts simulator in one workerd process (local D1/KV/
// Queues persisted under .wrangler/state; docs/local-development.md says why one process), fires
// their cron triggers on their wrangler schedules (docs/platform-model.md), seeds the demo
// organisation and passports once, and prints what a newcomer needs to try it.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { startDemoAuditor } from "./demo-auditor.mjs";
import {
  attestAsDemoAuditor,
  DEMO_AUDITOR,
  DEMO_KEY_DIRECTORY,
  DEMO_ORGANISATION,
  demoAgentSigningKeys,
  demoAuditorKeys,
  developmentKeys,
  logSigningKeys,
  notificationSigningKeys,
  recordSigningKeys,
  root,
  signDevelopmentToken,
} from "./dev-auth.mjs";
import { removeLocalAddresses, stateDirectory, writeLocalAddresses } from "./local-addresses.mjs";
import { startLocalCrons } from "./local-crons.mjs";
import { runWrangler, startLocalWorkers } from "./local-workers.mjs";
import { MODELLED_CONTROL_ENTRY, platformModelOn } from "./platform-model.mjs";

const resolverPort = Number(process.env.RESOLVER_PORT ?? 8787);
const controlPort = Number(process.env.CONTROL_PORT ?? 8788);
const resolverUrl = `http://127.0.0.1:${resolverPort}`;
const controlUrl = `http://127.0.0.1:${controlPort}`;
// Next to the control plane by default, so a second `npm start` on other ports does not collide.
const marketplacePort = Number(process.env.MARKETPLACE_PORT ?? controlPort + 2);
const marketplaceUrl = `http://127.0.0.1:${marketplacePort}`;
const hostsPort = Number(process.env.HOSTS_SIM_PORT ?? controlPort + 3);
const hostsUrl = `http://127.0.0.1:${hostsPort}`;
const demoApiPort = Number(process.env.DEMO_API_PORT ?? controlPort + 4);
const demoApiUrl = `http://127.0.0.1:${demoApiPort}`;
// The platform model's edge (docs/platform-model.md): Workers Caching in front of the resolver, as
// deployed, so the resolver's port answers through it. PLATFORM_MODEL=off serves the resolver directly.
const platformModel = process.env.PLATFORM_MODEL !== "off";
// The tests give each local service its own state directory, so it never shares SQLite files with another.
const persistTo = stateDirectory();
const seedFile = join(persistTo, "demo-passports.json");
const controlConfig = join("workers", "control", "wrangler.toml");

/** The running Workers, once startLocalWorkers was called (a stop during the start waits for it). */
let starting;
/** The cron driver, once the Workers run (docs/platform-model.md, Cron triggers). */
let crons;
/** The demo auditor's answers to re-evaluations (scripts/demo-auditor.mjs). */
let demoAuditor;
let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  // Should the runtime not stop in time, leave anyway: the exit takes workerd with it.
  setTimeout(() => process.exit(code), 5000).unref();
  try {
    removeLocalAddresses(persistTo);
    crons?.stop();
    demoAuditor?.stop();
    const service = await starting?.catch(() => undefined);
    await service?.stop();
  } catch (error) {
    process.stderr.write(`[dev] stopping: ${error.message}\n`);
  }
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => stop(0));

async function waitFor(url, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000}s`);
}

async function api(token, method, path, body) {
  const response = await fetch(`${controlUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await response.json();
  if (!response.ok) {
    throw Object.assign(new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`), { problem: json });
  }
  return json;
}

/** Creates a demo passport, or finds the one an earlier start made (the id is never re-minted). */
async function demoPassport(token, { evidence: _added, ...passport }) {
  try {
    return await api(token, "POST", "/v1/passports", { organisation_id: DEMO_ORGANISATION, ...passport });
  } catch (error) {
    const existing = error.problem?.existing_identity_id;
    if (!existing) throw error;
    return api(token, "GET", `/v1/passports/${existing}`);
  }
}

const DEMO_MANIFEST = "https://agents.demo.example/support/agent-card.json";
// The call path demo (docs/reciprocal-trust.md): the origin of the demo API (workers/demo-api) the
// demo agent calls, and its v2 base URL: an endpoint of the Demo Payments API that the start has the
// service verify (v1 stays claimed, as the CLI examples show).
const DEMO_API_ORIGIN = "https://payments.demo.example";
const DEMO_API_BASE = `${DEMO_API_ORIGIN}/v2`;
const DEMO_PASSPORTS = [
  {
    family: "api",
    display_name: "Demo Payments API",
    environment: "production",
    version: "2026-10",
    bindings: [
      { class: "endpoint", value: "https://payments.demo.example/v1" },
      { class: "openapi", value: "https://payments.demo.example/openapi.json" },
      { class: "endpoint", value: DEMO_API_BASE },
    ],
  },
  {
    family: "api",
    display_name: "Demo Orders API (staging)",
    environment: "staging",
    bindings: [{ class: "endpoint", value: "https://orders.staging.demo.example" }],
  },
  {
    family: "agent",
    display_name: "Demo Support Agent",
    environment: "production",
    bindings: [
      { class: "manifest", value: DEMO_MANIFEST },
      { class: "signing_keys", value: DEMO_KEY_DIRECTORY },
    ],
    // The envelope's required claims (ENVELOPE_REQUIRED_CLAIMS): agent.manifest_control comes from
    // the service's own check of the manifest (verifyDemoAgent); agent.operator_identity from the
    // demo auditor, a source this start trusts with its local key (TRUSTED_EVIDENCE_ATTESTERS).
    evidence: [
      {
        claim: "agent.operator_identity",
        source: DEMO_AUDITOR,
        scope: "Demo Organisation operates agents.demo.example",
        observed_at: "2026-10-15T00:00:00Z",
        fresh_until: "2030-01-01T00:00:00Z",
      },
    ],
  },
];

/**
 * Adds the demo passports' evidence that is not there yet, on every start: a state made before
 * evidence had to be attested had its auditor evidence re-marked untrusted (migration 0015). The
 * auditor's evidence counts only with its signature, made with the local demo key.
 */
async function addDemoEvidence(token, demo) {
  for (const { display_name, evidence = [] } of DEMO_PASSPORTS) {
    const passport = demo.find((p) => p.display_name === display_name);
    if (!passport || evidence.length === 0) continue;
    const view = await api(token, "GET", `/v1/passports/${passport.identity_id}`);
    for (const item of evidence) {
      const attest = item.source === DEMO_AUDITOR;
      const present = view.evidence.some(
        (e) => e.claim === item.claim && e.source === item.source && (!attest || e.attested_by !== null),
      );
      if (present) continue;
      const attestation = attest ? await attestAsDemoAuditor(passport.identity_id, item) : undefined;
      await api(token, "POST", `/v1/passports/${passport.identity_id}/evidence`, { ...item, attestation });
    }
  }
}

/** The demo agent's authority: it may refund demo customers up to 100.00 EUR, 50 times a day. */
const DEMO_GRANT = {
  action: "payments.refund",
  scope: {
    resource: "org:demo/customers/*",
    limits: { amount: { value: "100.00", currency: "EUR" }, rate: { count: 50, per: "day" } },
  },
  context: "Refunds to demo customers, granted by the demo organisation",
};

/**
 * Gives the demo agent a structured grant by the demo organisation (docs/authority.md), so a policy
 * requiring authority to refund has something to hold. Added on a start that finds none in force
 * (a state from before structured authority, or a grant that ran out), valid for a year.
 */
async function addDemoAuthority(token, agentId) {
  const view = await api(token, "GET", `/v1/passports/${agentId}`);
  const now = Date.now();
  const inForce = view.authority.some(
    (a) =>
      a.action === DEMO_GRANT.action &&
      typeof a.granted_by === "object" &&
      a.granted_by !== null &&
      Date.parse(a.expires_at) > now,
  );
  if (inForce) return;
  await api(token, "POST", `/v1/passports/${agentId}/authority`, {
    ...DEMO_GRANT,
    granted_by: { kind: "organisation", id: DEMO_ORGANISATION, relationship: "responsible" },
    expires_at: new Date(now + 365 * 86_400_000).toISOString(),
  });
}

/**
 * Plays the demo agent's host in the hosts simulator (its agent card names the passport) and has
 * the service verify the manifest binding, so the demo agent's envelope is current. The simulator
 * keeps fixtures in memory, so this runs on every start.
 */
async function verifyDemoAgent(token, agentId) {
  const card = new URL(DEMO_MANIFEST);
  const directory = new URL(DEMO_KEY_DIRECTORY);
  const signingKeys = await demoAgentSigningKeys();
  const fixture = await fetch(`${hostsUrl}/hosts/${card.hostname}`, {
    method: "PUT",
    body: JSON.stringify({
      paths: {
        [card.pathname]: {
          content_type: "application/json",
          body: { name: "Demo Support Agent", url: "https://agents.demo.example/support", passport: agentId },
        },
        // The key directory names the passport; the service proves it as the signing_keys binding.
        [directory.pathname]: {
          content_type: "application/http-message-signatures-directory+json",
          body: { passport: agentId, keys: [signingKeys.publicJwk] },
        },
      },
    }),
  });
  if (fixture.status !== 204) throw new Error(`hosts simulator refused the demo fixture: ${fixture.status}`);
  let view = await api(token, "GET", `/v1/passports/${agentId}`);
  // States seeded before signing keys existed get the binding now.
  if (!view.bindings.some((b) => b.class === "signing_keys" && b.value === DEMO_KEY_DIRECTORY)) {
    view = await api(token, "POST", `/v1/passports/${agentId}/bindings`, {
      class: "signing_keys",
      value: DEMO_KEY_DIRECTORY,
    });
  }
  for (const [cls, value] of [
    ["manifest", DEMO_MANIFEST],
    ["signing_keys", DEMO_KEY_DIRECTORY],
  ]) {
    const binding = view.bindings.find((b) => b.class === cls && b.value === value);
    if (!binding) continue;
    // A key directory the service last saw without the demo's current key is checked again.
    const current = binding.keys?.some((k) => k.thumbprint === signingKeys.publicJwk.kid) ?? true;
    await verifyBinding(token, agentId, binding, { force: !current });
  }
}

/** The demo agent declares it calls the Demo Payments API, so the API's page lists it (docs/reciprocal-trust.md). */
async function declareDemoUses(token, agentId, apiId) {
  const view = await api(token, "GET", `/v1/passports/${agentId}`);
  if (view.uses.some((u) => u.identity_id === apiId)) return;
  await api(token, "POST", `/v1/passports/${agentId}/uses`, { identity_id: apiId });
}

/**
 * Has the service verify a binding (already verified ones are re-checked only when asked). A check
 * that could not reach the simulated host is tried again: on a loaded machine the first subrequest
 * inside a freshly started runtime has failed about once in twenty cold starts.
 */
async function verifyBinding(token, id, binding, { force = false } = {}) {
  if (binding.verification.state === "verified" && !force) return;
  let outcome;
  for (let attempt = 1; attempt <= 4; attempt++) {
    outcome = await api(token, "POST", `/v1/passports/${id}/bindings/${binding.id}/verify`);
    if (outcome.result === "verified") return outcome;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`the demo binding ${binding.value} was not verified: ${outcome.reason}`);
}

/**
 * The demo API's side of the call path: the Demo Payments API's endpoint is proven by the
 * well-known document on its (simulated) host, so a consumer's check of the URL passes, and the
 * demo API Worker is told which passport it answers as.
 */
async function setUpDemoApi(token, apiId, mf) {
  let view = await api(token, "GET", `/v1/passports/${apiId}`);
  // A state seeded before the call path demo has no v2 endpoint yet.
  if (!view.bindings.some((b) => b.class === "endpoint" && b.value === DEMO_API_BASE)) {
    view = await api(token, "POST", `/v1/passports/${apiId}/bindings`, { class: "endpoint", value: DEMO_API_BASE });
  }
  const endpoint = view.bindings.find((b) => b.class === "endpoint" && b.value === DEMO_API_BASE);
  if (endpoint && endpoint.verification.state !== "verified") {
    const first = await api(token, "POST", `/v1/passports/${apiId}/bindings/${endpoint.id}/verify`);
    const document = first.instructions?.well_known?.document ?? { identities: [{ identity_id: apiId }] };
    const host = new URL(DEMO_API_ORIGIN).hostname;
    const fixture = await fetch(`${hostsUrl}/hosts/${host}`, {
      method: "PUT",
      body: JSON.stringify({
        paths: { "/.well-known/passport-identity.json": { content_type: "application/json", body: document } },
      }),
    });
    if (fixture.status !== 204) throw new Error(`hosts simulator refused the demo API fixture: ${fixture.status}`);
    if (first.result !== "verified") await verifyBinding(token, apiId, endpoint);
  }
  const config = await mf.getKVNamespace("DEMO_CONFIG", "passport-demo-api");
  await config.put("API_PASSPORT", apiId);
}

async function seed(token) {
  if (existsSync(seedFile)) {
    const known = JSON.parse(readFileSync(seedFile, "utf8"));
    const stillThere = await Promise.all(known.map((p) => fetch(`${resolverUrl}/api/p/${p.identity_id}.json`)));
    if (stillThere.every((r) => r.ok)) return known;
  }
  const created = [];
  for (const passport of DEMO_PASSPORTS) {
    const view = await demoPassport(token, passport);
    created.push({ identity_id: view.identity_id, display_name: view.display_name, family: view.family });
  }
  writeFileSync(seedFile, JSON.stringify(created, null, 2));
  return created;
}

const keys = await developmentKeys();
const signing = await recordSigningKeys();
const notificationSigning = await notificationSigningKeys();
const logSigning = await logSigningKeys();
const auditor = await demoAuditorKeys();

/** The shards the development environment lists in D1_SHARDS, then the directory (docs/sharding.md). */
function developmentDatabases() {
  const development = parseToml(readFileSync(join(root, controlConfig), "utf8")).env.development;
  return [...JSON.parse(development.vars.D1_SHARDS), "DIRECTORY"];
}

// Its own processes, which have exited before the runtime opens the databases; they run while the
// Workers are bundled. Every shard gets the same migrations, the directory its own (docs/sharding.md).
const migrate = (binding) =>
  runWrangler(root, [
    ...["d1", "migrations", "apply", binding, "--local", "--persist-to", persistTo],
    ...["-c", controlConfig, "--env", "development"],
  ]);
// One after another: at any moment one process owns the state directory (docs/local-development.md).
const migrated = developmentDatabases().reduce(
  (before, binding) => before.then(() => migrate(binding)),
  Promise.resolve(),
);
migrated.catch(() => {}); // reported where the start awaits it

// The marketplace handoff's secrets (docs/acquisition.md), made once and kept beside the dev keys.
function marketplaceSecrets() {
  const file = join(root, ".wrangler", "dev-auth", "marketplace.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  const key = () => randomBytes(32).toString("base64");
  const secrets = {
    MARKETPLACE_TOKEN_HASH_KEY: key(),
    MARKETPLACE_TOKEN_ENCRYPTION_KEY: key(),
    MARKETPLACE_EVENTS_SECRET: key(),
    MARKETPLACE_AWS_ACCESS_KEY_ID: "AKIDSIMULATOR0000000",
    MARKETPLACE_AWS_SECRET_ACCESS_KEY: key(),
  };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

// wrangler's offline warning about the sample `request.cf` object is not worth a newcomer's attention.
const OFFLINE_NOISE = /Request\.cf|workers\.cloudflare\.com|GetAddrInfoReqWrap/;
const workers = [
  {
    name: "passport-hosts-sim",
    config: join("workers", "hosts-sim", "wrangler.toml"),
    port: hostsPort,
    vars: {},
  },
  {
    name: "passport-marketplace-sim",
    config: join("workers", "marketplace-sim", "wrangler.toml"),
    port: marketplacePort,
    vars: { FULFILLMENT_URL: `${controlUrl}/marketplace/fulfill` },
  },
  {
    name: "passport-demo-api",
    config: join("workers", "demo-api", "wrangler.toml"),
    port: demoApiPort,
    vars: {
      RESOLVER_URL: resolverUrl,
      SIGNING_JWKS: JSON.stringify({ keys: [signing.publicJwk] }),
      PUBLIC_ORIGIN: DEMO_API_ORIGIN,
    },
  },
  ...(platformModel
    ? [
        {
          name: "passport-platform-model",
          config: join("workers", "platform-model", "wrangler.toml"),
          port: resolverPort,
          vars: {},
        },
      ]
    : []),
  {
    name: "passport-resolver",
    config: "wrangler.toml",
    // Behind the model's edge, the resolver has no port of its own, as on Cloudflare.
    port: platformModel ? undefined : resolverPort,
    // The resolver purges the model's edge where the platform's ctx.cache would be.
    services: platformModel
      ? { PLATFORM_EDGE_CACHE: { name: "passport-platform-model", entrypoint: "EdgeCachePurge" } }
      : {},
    vars: {
      // The record key, and the change notifications' key (docs/events.md).
      SIGNING_JWKS: JSON.stringify({ keys: [signing.publicJwk, notificationSigning.publicJwk] }),
      LOG_VERIFIER_KEY: logSigning.verifierKey,
      PUBLIC_BASE_URL: resolverUrl,
      DASHBOARD_BASE_URL: controlUrl,
    },
  },
  {
    name: "passport-control",
    config: controlConfig,
    env: "development",
    // Under the platform model unless PLATFORM_MODEL=off (docs/platform-model.md).
    ...(platformModelOn() ? { main: MODELLED_CONTROL_ENTRY } : {}),
    port: controlPort,
    vars: {
      DEV_AUTH_PUBLIC_JWK: JSON.stringify(keys.publicJwk),
      TRUSTED_EVIDENCE_ATTESTERS: JSON.stringify({ [DEMO_AUDITOR]: { keys: [auditor.publicJwk] } }),
      RESOLVER_BASE_URL: resolverUrl,
      SIGNING_KEY: JSON.stringify(signing.privateJwk),
      LOG_SIGNING_KEY: logSigning.privateJwk,
      NOTIFICATION_SIGNING_KEY: JSON.stringify(notificationSigning.privateJwk),
      ...marketplaceSecrets(),
      MARKETPLACE_METERING_URL: `${marketplaceUrl}/`,
      MARKETPLACE_ENTITLEMENT_URL: `${marketplaceUrl}/`,
      MARKETPLACE_SNS_CERT_ORIGIN: marketplaceUrl,
      DASHBOARD_ONBOARDING_URL: `${controlUrl}/dashboard/onboarding`,
      CONTROL_BASE_URL: controlUrl,
    },
  },
];

const modelled = platformModelOn(process.env);
const workersOutput = (text) => {
  for (const line of text.split("\n")) {
    if (line.trim() && !OFFLINE_NOISE.test(line)) process.stderr.write(`[workers] ${line}\n`);
  }
};

try {
  process.stderr.write("[dev] applying D1 migrations and starting the Workers\n");
  starting = startLocalWorkers({ root, persistTo, workers, beforeStart: migrated, onOutput: workersOutput });
  const service = await starting;
  if (stopping) await new Promise(() => {});
  // The scheduled handlers run on their wrangler schedules, as deployed (the outbox drain, the
  // binding re-checks and the re-evaluation that clears a reactivated passport's flag).
  if (modelled) crons = startLocalCrons({ root, mf: service.mf, workers, onOutput: workersOutput });
  const db = await service.mf.getD1Database("DB", "passport-control");
  await db.batch([
    db.prepare("INSERT OR IGNORE INTO organisations (id, name) VALUES ('org_demo_group', 'Demo Group')"),
    db
      .prepare(
        "INSERT OR IGNORE INTO organisations (id, name, parent_id) VALUES (?, 'Demo Organisation', 'org_demo_group')",
      )
      .bind(DEMO_ORGANISATION),
  ]);
  await Promise.all([
    waitFor(`${resolverUrl}/health`),
    waitFor(`${controlUrl}/health`),
    waitFor(`${marketplaceUrl}/health`),
  ]);
  const token = await signDevelopmentToken();
  const demo = await seed(token);
  await addDemoEvidence(token, demo);
  const agent = demo.find((p) => p.family === "agent");
  if (agent) await verifyDemoAgent(token, agent.identity_id);
  if (agent) await addDemoAuthority(token, agent.identity_id);
  const payments = demo.find((p) => p.display_name === "Demo Payments API");
  if (payments) await setUpDemoApi(token, payments.identity_id, service.mf);
  if (agent && payments) await declareDemoUses(token, agent.identity_id, payments.identity_id);
  if (agent) {
    const { evidence = [] } = DEMO_PASSPORTS.find((p) => p.display_name === agent.display_name) ?? {};
    demoAuditor = startDemoAuditor({
      controlUrl,
      passports: [{ id: agent.identity_id, evidence }],
      onOutput: (line) => process.stderr.write(`[demo auditor] ${line}\n`),
    });
  }
  // The demos, the CLI and `npm run local-env` read these, so they follow the ports of this start.
  writeLocalAddresses(persistTo, {
    resolver: resolverUrl,
    control: controlUrl,
    marketplace: marketplaceUrl,
    hosts: hostsUrl,
    demoApi: demoApiUrl,
  });
  const first = demo[0].identity_id;
  // A fresh endpoint each start, so the printed create command never collides with an earlier one.
  const exampleSuffix = Date.now().toString(36);
  console.log(`
Passport Identity Service is running.

  Resolver (public):        ${resolverUrl}${platformModel ? "  (through the platform model's edge cache; PLATFORM_MODEL=off to bypass it)" : ""}
  Control plane (Dashboard API): ${controlUrl}

Demo passports (organisation ${DEMO_ORGANISATION}):
${demo.map((p) => `  ${p.identity_id}  ${p.family.padEnd(5)}  ${p.display_name}`).join("\n")}

Development token (owner of ${DEMO_ORGANISATION}; make others with \`npm run token -- --role viewer\`):
  ${token}

Try:
  curl -s ${resolverUrl}/api/p/${first}.json

  curl -s -X POST ${controlUrl}/v1/passports \\
    -H "authorization: Bearer ${token}" -H "content-type: application/json" \\
    -d '{"organisation_id":"${DEMO_ORGANISATION}","family":"api","display_name":"My API","bindings":[{"class":"endpoint","value":"https://my-api-${exampleSuffix}.example.com"}]}'

  curl -s ${controlUrl}/v1/me -H "authorization: Bearer ${token}"

  curl -s "${resolverUrl}/api/agent-envelope?target=${encodeURIComponent(DEMO_MANIFEST)}"

The same in your shell, on these ports: eval "$(npm run --silent local-env)" sets RESOLVER, CONTROL,
MARKETPLACE and TOKEN for the README's commands.

Call path demo: the demo agent signs a call to the demo API (${demoApiUrl}, served as ${DEMO_API_BASE}):
  npm run call-demo                     (docs/reciprocal-trust.md, Call path)

Verify a passport with the CLI (it reads this start's resolver address):
  npm run passport -- verify ${first} --jwks ${resolverUrl}/.well-known/jwks.json

Acquisition demo: open ${marketplaceUrl}/ (simulated marketplace), subscribe, and claim on the onboarding page with the token above (docs/acquisition.md).

${
  crons
    ? `Cron triggers run as deployed: ${crons.triggers.map((t) => `${t.worker} "${t.cron}"`).join(", ")} (PLATFORM_MODEL=off turns the platform model off; docs/platform-model.md).`
    : "Platform model off (PLATFORM_MODEL=off): cron triggers do not run, as in bare workerd (docs/platform-model.md)."
}

Press Ctrl-C to stop.`);
} catch (error) {
  process.stderr.write(`[dev] ${error.message}\n`);
  stop(1);
}
