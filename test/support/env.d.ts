declare namespace Cloudflare {
  interface Env {
    DEV_AUTH_PUBLIC_JWK: string;
    TEST_DEV_PRIVATE_JWK: string;
    /** The resolver's public fetch handler (the RESOLVER binding reaches only its admin entry point). */
    TEST_RESOLVER: Fetcher;
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}
