declare namespace Cloudflare {
  interface Env {
    /** The marketplace simulator (workers/marketplace-sim), which the control plane also calls. */
    MARKETPLACE_SIM: Fetcher;
    MARKETPLACE_TOKEN_HASH_KEY: string;
    MARKETPLACE_TOKEN_ENCRYPTION_KEY: string;
    MARKETPLACE_EVENTS_SECRET: string;
    MARKETPLACE_AWS_ACCESS_KEY_ID: string;
    MARKETPLACE_AWS_SECRET_ACCESS_KEY: string;
  }
}
