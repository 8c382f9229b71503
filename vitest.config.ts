import { readFileSync } from "node:fs";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { parse as parseToml } from "smol-toml";
import { defineConfig } from "vitest/config";
import { compatibilityDate } from "./scripts/compatibility-date.ts";
import { logKeyPair, signingKeyPair } from "./scripts/dev-keys.mjs";
import { MODELLED_CONTROL_ENTRY, platformModelOn } from "./scripts/platform-model.mjs";
import { buildWorker } from "./test/build-worker.ts";
import { cronsOf } from "./workers/platform-model/src/cron.ts";

const root = import.meta.dirname;
const runtime = { compatibilityDate: compatibilityDate(root), compatibilityFlags: ["nodejs_compat"] };
/** The resolver's `[[ratelimits]]` of wrangler.toml, for the bundles run beside the Worker under test. */
const RESOLVER_RATELIMITS = {
  QUERIES_PER_CLIENT: { namespace_id: "1101", simple: { limit: 300, period: 60 as const } },
  STATUS_PER_CLIENT: { namespace_id: "1102", simple: { limit: 120, period: 60 as const } },
};

/**
 * The name @cloudflare/vitest-plugin gives a project's Worker under test ("vitest-plugin-runner-"
 * and the project name): a resolver bundle beside the control plane binds its publication
 * sequencers there, as the deployed resolver binds them in the control plane's script.
 */
const runnerOf = (project: string) => `vitest-plugin-runner-${project}`;

/** Fresh marketplace handoff secrets per run (see workers/control/src/marketplace/config.ts). */
function marketplaceSecrets() {
  const key = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  return {
    MARKETPLACE_TOKEN_HASH_KEY: key(),
    MARKETPLACE_TOKEN_ENCRYPTION_KEY: key(),
    MARKETPLACE_EVENTS_SECRET: key(),
    MARKETPLACE_AWS_ACCESS_KEY_ID: "AKIDSIMULATOR0000000",
    MARKETPLACE_AWS_SECRET_ACCESS_KEY: key(),
  };
}

/**
 * The keys a control-plane test run signs with: development tokens, records (the resolver serves
 * the public half as SIGNING_JWKS), and the trusted evidence source's attestations.
 */
async function controlPlaneKeys() {
  const devKeys = await signingKeyPair("ES256");
  const recordSigningKeys = await signingKeyPair("ES256");
  // Change notifications are signed with Ed25519 (docs/events.md); the resolver lists both keys.
  const notificationSigningKeys = await signingKeyPair("EdDSA");
  // LOG_ORIGIN of the control plane's development environment (workers/control/wrangler.toml).
  const logKeys = await logKeyPair("passport.localhost/log");
  // The one trusted evidence source of the tests, and the key it attests with.
  const auditorKeys = await signingKeyPair("ES256", "auditor-1");
  return {
    bindings: {
      TRUSTED_EVIDENCE_ATTESTERS: JSON.stringify({
        "Demo trusted auditor": { keys: [JSON.parse(auditorKeys.publicJwk)] },
      }),
      TEST_AUDITOR_PRIVATE_JWK: auditorKeys.privateJwk,
      DEV_AUTH_PUBLIC_JWK: devKeys.publicJwk,
      TEST_DEV_PRIVATE_JWK: devKeys.privateJwk,
      SIGNING_KEY: recordSigningKeys.privateJwk,
      NOTIFICATION_SIGNING_KEY: notificationSigningKeys.privateJwk,
      TEST_SIGNING_JWKS: JSON.stringify({
        keys: [JSON.parse(recordSigningKeys.publicJwk), JSON.parse(notificationSigningKeys.publicJwk)],
      }),
      LOG_SIGNING_KEY: logKeys.privateJwk,
      TEST_LOG_VERIFIER_KEY: logKeys.verifierKey,
    },
  };
}

/**
 * The platform model's edge (docs/platform-model.md): Workers Caching in front of the resolver
 * bundle named `origin`. Tests reach its public side through a `TEST_EDGE` binding; the resolver
 * bundle purges it through `PLATFORM_EDGE_CACHE` (below), as it purges Workers Caching when deployed.
 */
function edgeModel(origin: string) {
  return {
    name: "passport-platform-model",
    modules: true,
    scriptPath: buildWorker(root, "workers/platform-model/wrangler.toml", "platform-model"),
    ...runtime,
    durableObjects: { EDGE_CACHE: "EdgeCache" },
    serviceBindings: { ORIGIN: origin },
  };
}

/** The binding only local and test configurations give the resolver: the model's `ctx.cache.purge`. */
const MODEL_PURGE = { PLATFORM_EDGE_CACHE: { name: "passport-platform-model", entrypoint: "EdgeCachePurge" } };

/**
 * The deployable resolver bundle under the name the control plane's RESOLVER binding uses; its
 * status route reaches the publication sequencers of the control plane under test (`project`).
 */
function resolverBundle(signingJwks: string, logVerifierKey: string, project: string) {
  return {
    name: "passport-resolver",
    modules: true,
    scriptPath: buildWorker(root, "wrangler.toml", "resolver"),
    ...runtime,
    kvNamespaces: { SNAPSHOTS: "passport-snapshots" },
    ratelimits: RESOLVER_RATELIMITS,
    durableObjects: {
      PUBLICATION_SEQUENCER: { className: "PublicationSequencer", scriptName: runnerOf(project) },
    },
    serviceBindings: MODEL_PURGE,
    bindings: {
      PUBLIC_BASE_URL: "http://resolver.test",
      SIGNING_JWKS: signingJwks,
      LOG_VERIFIER_KEY: logVerifierKey,
      ENVELOPE_REQUIRED_CLAIMS: JSON.stringify(["agent.operator_identity", "agent.manifest_control"]),
      DASHBOARD_BASE_URL: "http://control.test",
    },
  };
}

/** The bound hosts' stand-in, under the name the control plane's OUTBOUND_SIMULATOR binding uses. */
function hostsSimulator() {
  return {
    name: "passport-hosts-sim",
    modules: true,
    scriptPath: buildWorker(root, "workers/hosts-sim/wrangler.toml", "hosts-sim"),
    ...runtime,
  };
}

const controlPlaneConfig = { configPath: "./workers/control/wrangler.toml", environment: "development" };
/** The control plane's cron triggers, as its wrangler config gives them (test/support/crons.ts runs them). */
const controlPlaneCrons = cronsOf(
  parseToml(readFileSync(`${root}/workers/control/wrangler.toml`, "utf8")) as Parameters<typeof cronsOf>[0],
  controlPlaneConfig.environment,
);

/**
 * The control plane's tests run it under the platform model (docs/platform-model.md): the same
 * Worker through an entry that models its KV and D1 bindings and counts its Durable Objects'
 * requests. `PLATFORM_MODEL=off` runs the Worker's own entry instead.
 */
const platformModel = platformModelOn() ? "on" : "off";
const modelledControlPlane = platformModel === "on" ? { main: `${root}/${MODELLED_CONTROL_ENTRY}` } : {};

// The workerd suites share two cores with each other in `npm test`; a test that does real D1, KV
// and Durable Object work (a rename of 60 passports, 60 rate-limited requests) can take several
// seconds under that load. The timeout only catches a hung test: nothing here asserts a duration.
const WORKERD_TEST_TIMEOUT = 30_000;
// Under the platform model a passport's publications start at least a second apart (KV takes one
// write a second to its snapshot key, docs/publication.md), so a test that changes one passport
// fifty times in a row takes fifty seconds.
const MODELLED_TEST_TIMEOUT = 120_000;

export default defineConfig({
  test: {
    // The suites mostly wait, not compute: a passport's publications are spaced by a second (KV's
    // one write a second to a key), and alarms, queues and the edge model keep their real delays.
    // Four files at a time on a two-core machine keep the CPUs busy; more would starve workerd.
    maxWorkers: 4,
    projects: [
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // The deployable bundle beside the Worker under test, so tests reach ResolverAdmin's
            // RPC hop into the public entry point exactly as the control plane does.
            miniflare: {
              serviceBindings: {
                TEST_RESOLVER_ADMIN: { name: "resolver-bundle", entrypoint: "ResolverAdmin" },
                TEST_EDGE: "passport-platform-model",
                TEST_EDGE_PURGE: MODEL_PURGE.PLATFORM_EDGE_CACHE,
              },
              workers: [
                // The status route's binding (script_name passport-control) needs a script of that name.
                {
                  name: "passport-control",
                  modules: true,
                  scriptPath: `${root}/test/simulators/status-authority.js`,
                  compatibilityDate: runtime.compatibilityDate,
                  durableObjects: { PUBLICATION_SEQUENCER: "PublicationSequencer" },
                },
                {
                  name: "resolver-bundle",
                  modules: true,
                  scriptPath: buildWorker(root, "wrangler.toml", "resolver"),
                  ...runtime,
                  kvNamespaces: { SNAPSHOTS: "passport-snapshots" },
                  ratelimits: RESOLVER_RATELIMITS,
                  serviceBindings: MODEL_PURGE,
                },
                edgeModel("resolver-bundle"),
              ],
            },
          }),
        ],
        test: {
          name: "resolver",
          include: ["test/resolver/**/*.test.ts", "test/domain/**/*.test.ts", "test/platform-model/edge/**/*.test.ts"],
          testTimeout: WORKERD_TEST_TIMEOUT,
        },
      },
      {
        plugins: [
          cloudflareTest(async () => {
            const keys = await controlPlaneKeys();
            const identityProviderKeys = await signingKeyPair("RS256");
            return {
              ...modelledControlPlane,
              wrangler: controlPlaneConfig,
              miniflare: {
                bindings: {
                  ...keys.bindings,
                  TEST_MIGRATIONS: await readD1Migrations(`${root}/migrations`),
                  TEST_DIRECTORY_MIGRATIONS: await readD1Migrations(`${root}/migrations/directory`),
                  TEST_PLATFORM_MODEL: platformModel,
                  // The simulation's duration in seconds (test/platform-model/production-hour.test.ts); empty for the short run.
                  TEST_SIMULATION_SECONDS: process.env.SIMULATION_SECONDS ?? "",
                  // Revocations timed to their notification (test/platform-model/notification-latency.test.ts); empty for 5.
                  TEST_NOTIFICATION_SAMPLES: process.env.NOTIFICATION_SAMPLES ?? "",
                  TEST_IDP_PUBLIC_JWK: identityProviderKeys.publicJwk,
                  TEST_IDP_PRIVATE_JWK: identityProviderKeys.privateJwk,
                  TEST_CONTROL_CRONS: JSON.stringify(controlPlaneCrons),
                  ...marketplaceSecrets(),
                },
                // A small stand-in for FULFILL_CEILING: the real one (300 a minute, shared by every
                // test file in the run) cannot be used up without starving the others' set-ups.
                ratelimits: { TEST_FULFILL_CEILING: { namespace_id: "9001", simple: { limit: 5, period: 60 } } },
                serviceBindings: {
                  TEST_RESOLVER: "passport-resolver",
                  TEST_EDGE: "passport-platform-model",
                  TEST_EDGE_PURGE: MODEL_PURGE.PLATFORM_EDGE_CACHE,
                  TEST_IDENTITY_PROVIDER: "identity-provider",
                  MARKETPLACE_SIM: "passport-marketplace-sim",
                },
                workers: [
                  {
                    name: "identity-provider",
                    modules: true,
                    scriptPath: `${root}/test/simulators/identity-provider.js`,
                    compatibilityDate: runtime.compatibilityDate,
                    bindings: {
                      JWKS: JSON.stringify({ keys: [JSON.parse(identityProviderKeys.publicJwk)] }),
                    } as Record<string, string>,
                  },
                  {
                    name: "passport-marketplace-sim",
                    modules: true,
                    scriptPath: buildWorker(root, "workers/marketplace-sim/wrangler.toml", "marketplace-sim"),
                    ...runtime,
                    bindings: { FULFILLMENT_URL: "http://control.test/marketplace/fulfill" } as Record<string, string>,
                  },
                  hostsSimulator(),
                  resolverBundle(keys.bindings.TEST_SIGNING_JWKS, keys.bindings.TEST_LOG_VERIFIER_KEY, "control"),
                  edgeModel("passport-resolver"),
                ],
              },
            };
          }),
        ],
        test: {
          name: "control",
          testTimeout: platformModel === "on" ? MODELLED_TEST_TIMEOUT : WORKERD_TEST_TIMEOUT,
          include: [
            "test/control/**/*.test.ts",
            "test/e2e/**/*.test.ts",
            "test/marketplace/**/*.test.ts",
            "test/platform-model/*.test.ts",
          ],
          setupFiles: ["test/support/apply-migrations.ts"],
        },
      },
      {
        // The verifier against records the control plane publishes and the resolver serves: only
        // those two Workers, their storage and the keys they sign and verify with.
        plugins: [
          cloudflareTest(async () => {
            const keys = await controlPlaneKeys();
            return {
              wrangler: controlPlaneConfig,
              miniflare: {
                bindings: {
                  ...keys.bindings,
                  TEST_MIGRATIONS: await readD1Migrations(`${root}/migrations`),
                  TEST_DIRECTORY_MIGRATIONS: await readD1Migrations(`${root}/migrations/directory`),
                  // The propagation property's run count and history seed (test/verifier/propagation.test.ts).
                  TEST_PROPAGATION_RUNS: process.env.PROPAGATION_RUNS ?? "",
                  TEST_PROPAGATION_SEED: process.env.PROPAGATION_SEED ?? "",
                },
                serviceBindings: { TEST_RESOLVER: "passport-resolver" },
                workers: [
                  hostsSimulator(),
                  resolverBundle(keys.bindings.TEST_SIGNING_JWKS, keys.bindings.TEST_LOG_VERIFIER_KEY, "verifier"),
                  edgeModel("passport-resolver"),
                ],
              },
            };
          }),
        ],
        test: {
          name: "verifier",
          testTimeout: WORKERD_TEST_TIMEOUT,
          include: ["test/verifier/*.test.ts"],
          setupFiles: ["test/support/apply-migrations.ts"],
        },
      },
      {
        // Each migration chain on its own fresh database; no Worker under test.
        plugins: [
          cloudflareTest(async () => ({
            miniflare: {
              ...runtime,
              d1Databases: [
                "TEST_MIGRATION_DB_ORIGINAL_INIT",
                "TEST_MIGRATION_DB_CURRENT",
                "TEST_MIGRATION_DB_DUPLICATES",
                "TEST_MIGRATION_DB_ATTESTATION",
                "TEST_MIGRATION_DB_CANONICAL",
                "TEST_MIGRATION_DB_RECHECKS",
                "TEST_MIGRATION_DB_AUTHORITY",
                "TEST_MIGRATION_DB_REEVALUATION",
                "TEST_MIGRATION_DB_RETIREMENT",
                "TEST_MIGRATION_DB_USES",
              ],
              bindings: { TEST_MIGRATIONS: await readD1Migrations(`${root}/migrations`) },
            },
          })),
        ],
        test: { name: "migrations", include: ["test/migrations/**/*.test.ts"], testTimeout: WORKERD_TEST_TIMEOUT },
      },
      {
        // Checks on the repository itself (landed migrations, the compatibility date), run by Node.
        test: { name: "tooling", include: ["test/tooling/**/*.test.ts"], environment: "node" },
      },
      {
        // The verifier CLI and the packed verifier (in Node, Bun and Deno) against `npm start`'s local
        // service, run by Node (not workerd).
        test: {
          name: "verifier-cli",
          include: ["test/verifier/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/service-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // `npm start`'s local service behaving like the edge (client addresses, rate limits), run by Node.
        test: {
          name: "local",
          include: ["test/local/**/*.test.ts"],
          environment: "node",
          // Each file starts its own `npm start`: one at a time, so two starts never compete for
          // the CPUs with each other and with the workerd suites running beside them.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 240_000,
        },
      },
      {
        // The Dashboard in Debian's Chromium against `npm start`'s local service, run by Node.
        // `npm test` runs it on its own, before the other suites, through test/browser/run.mjs (skipped without Chromium).
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/service-setup.ts"],
          fileParallelism: false,
          // A test that follows the resolver through several changes may wait, at each, up to the
          // local freshness bound (45 s, `currentRecord` in test/browser/browser.ts): under a short
          // purge budget the edge model serves the previous record until its 30 s lifetime ends.
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
