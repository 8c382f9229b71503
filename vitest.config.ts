import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { signingKeyPair } from "./scripts/dev-keys.mjs";
import { buildWorker } from "./test/build-worker.ts";

const root = import.meta.dirname;

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

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // The deployable bundle beside the Worker under test, so tests reach ResolverAdmin's
            // RPC hop into the public entry point exactly as the control plane does.
            miniflare: {
              serviceBindings: { TEST_RESOLVER_ADMIN: { name: "resolver-bundle", entrypoint: "ResolverAdmin" } },
              workers: [
                {
                  name: "resolver-bundle",
                  modules: true,
                  scriptPath: buildWorker(root, "wrangler.toml", "resolver"),
                  compatibilityDate: "2026-10-15",
                  compatibilityFlags: ["nodejs_compat"],
                  kvNamespaces: { SNAPSHOTS: "passport-snapshots" },
                },
              ],
            },
          }),
        ],
        test: { name: "resolver", include: ["test/resolver/**/*.test.ts", "test/domain/**/*.test.ts"] },
      },
      {
        plugins: [
          cloudflareTest(async () => {
            const keys = await signingKeyPair("ES256");
            const identityProviderKeys = await signingKeyPair("RS256");
            const recordSigningKeys = await signingKeyPair("ES256");
            const signingJwks = JSON.stringify({ keys: [JSON.parse(recordSigningKeys.publicJwk)] });
            return {
              wrangler: { configPath: "./workers/control/wrangler.toml", environment: "development" },
              miniflare: {
                bindings: {
                  DEV_AUTH_PUBLIC_JWK: keys.publicJwk,
                  TEST_DEV_PRIVATE_JWK: keys.privateJwk,
                  TEST_MIGRATIONS: await readD1Migrations(`${root}/migrations`),
                  TEST_IDP_PUBLIC_JWK: identityProviderKeys.publicJwk,
                  TEST_IDP_PRIVATE_JWK: identityProviderKeys.privateJwk,
                  SIGNING_KEY: recordSigningKeys.privateJwk,
                  TEST_SIGNING_JWKS: signingJwks,
                  ...marketplaceSecrets(),
                },
                serviceBindings: {
                  TEST_RESOLVER: "passport-resolver",
                  TEST_IDENTITY_PROVIDER: "identity-provider",
                  MARKETPLACE_SIM: "passport-marketplace-sim",
                },
                workers: [
                  {
                    name: "identity-provider",
                    modules: true,
                    scriptPath: `${root}/test/simulators/identity-provider.js`,
                    compatibilityDate: "2026-10-15",
                    bindings: {
                      JWKS: JSON.stringify({ keys: [JSON.parse(identityProviderKeys.publicJwk)] }),
                    } as Record<string, string>,
                  },
                  {
                    name: "passport-marketplace-sim",
                    modules: true,
                    scriptPath: buildWorker(root, "workers/marketplace-sim/wrangler.toml", "marketplace-sim"),
                    compatibilityDate: "2026-10-15",
                    compatibilityFlags: ["nodejs_compat"],
                    bindings: { FULFILLMENT_URL: "http://control.test/marketplace/fulfill" } as Record<string, string>,
                  },
                  {
                    name: "passport-resolver",
                    modules: true,
                    scriptPath: buildWorker(root, "wrangler.toml", "resolver"),
                    compatibilityDate: "2026-10-15",
                    compatibilityFlags: ["nodejs_compat"],
                    kvNamespaces: { SNAPSHOTS: "passport-snapshots" },
                    bindings: {
                      PUBLIC_BASE_URL: "http://resolver.test",
                      SIGNING_JWKS: signingJwks,
                      ENVELOPE_REQUIRED_CLAIMS: JSON.stringify(["agent.operator_identity", "agent.manifest_control"]),
                    },
                  },
                ],
              },
            };
          }),
        ],
        test: {
          name: "control",
          include: [
            "test/control/**/*.test.ts",
            "test/e2e/**/*.test.ts",
            "test/marketplace/**/*.test.ts",
            "test/verifier/*.test.ts",
          ],
          setupFiles: ["test/support/apply-migrations.ts"],
        },
      },
      {
        // The verifier CLI against `npm start`'s local service, run by Node (not workerd).
        test: {
          name: "verifier-cli",
          include: ["test/verifier/integration/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The Dashboard in Debian's Chromium against `npm start`'s local service, run by Node.
        // `npm test` runs it on its own, before the other suites, through test/browser/run.mjs (skipped without Chromium).
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/browser/global-setup.ts"],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
