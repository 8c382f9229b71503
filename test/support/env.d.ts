declare namespace Cloudflare {
  interface Env {
    DEV_AUTH_PUBLIC_JWK: string;
    TEST_DEV_PRIVATE_JWK: string;
    /** The resolver's public fetch handler (the RESOLVER binding reaches only its admin entry point). */
    TEST_RESOLVER: Fetcher;
    /** The platform model's edge in front of that resolver, and its purge (docs/platform-model.md). */
    TEST_EDGE: Fetcher;
    TEST_EDGE_PURGE: Fetcher;
    /** The control plane's `[triggers] crons` (JSON list), read from its wrangler.toml (test/support/crons.ts). */
    TEST_CONTROL_CRONS: string;
    /** The local identity-provider simulator, serving the JWKS of TEST_IDP_PUBLIC_JWK. */
    TEST_IDENTITY_PROVIDER: Fetcher;
    TEST_IDP_PUBLIC_JWK: string;
    TEST_IDP_PRIVATE_JWK: string;
    /** Private JWK the control plane signs records with, and the matching public key set. */
    SIGNING_KEY: string;
    TEST_SIGNING_JWKS: string;
    /** Private Ed25519 JWK change notifications are signed with; its public half is in TEST_SIGNING_JWKS. */
    NOTIFICATION_SIGNING_KEY: string;
    /** Private Ed25519 JWK the transparency log signs checkpoints with, and its note verifier key. */
    LOG_SIGNING_KEY: string;
    TEST_LOG_VERIFIER_KEY: string;
    /** Private JWK the tests' trusted evidence source ("Demo trusted auditor") attests with. */
    TEST_AUDITOR_PRIVATE_JWK: string;
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** The directory database's own migrations (migrations/directory, docs/sharding.md). */
    TEST_DIRECTORY_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** A fulfill ceiling of 5 a minute, for driving the ceiling to its refusal (vitest.config.ts). */
    TEST_FULFILL_CEILING: RateLimit;
    /** Empty databases for the migration-chain tests (test/migrations), one per chain. */
    TEST_MIGRATION_DB_ORIGINAL_INIT: D1Database;
    TEST_MIGRATION_DB_CURRENT: D1Database;
    TEST_MIGRATION_DB_DUPLICATES: D1Database;
    TEST_MIGRATION_DB_ATTESTATION: D1Database;
    TEST_MIGRATION_DB_CANONICAL: D1Database;
    /** Runs of the propagation property and the seed of its recorded history; empty for the defaults. */
    TEST_PROPAGATION_RUNS: string;
    /** "on" when the control plane runs under the platform model (vitest.config.ts), "off" with PLATFORM_MODEL=off. */
    TEST_PLATFORM_MODEL: string;
    /** The simulation's duration in seconds (`SIMULATION_SECONDS`); empty for `npm test`'s short run. */
    TEST_SIMULATION_SECONDS: string;
    /** How many revocations the notification latency test times (`NOTIFICATION_SAMPLES`); empty for 5. */
    TEST_NOTIFICATION_SAMPLES: string;
    TEST_PROPAGATION_SEED: string;
    TEST_MIGRATION_DB_RECHECKS: D1Database;
    TEST_MIGRATION_DB_AUTHORITY: D1Database;
    TEST_MIGRATION_DB_REEVALUATION: D1Database;
    TEST_MIGRATION_DB_RETIREMENT: D1Database;
    TEST_MIGRATION_DB_USES: D1Database;
  }
}
