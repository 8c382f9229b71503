// The resolver's own bindings (workers/resolver/worker-configuration.d.ts), merged into this
// project's generated Env, which is the control plane's: the propagation test runs the resolver's
// code in this project against modelled KV (world.ts), and that code is type-checked here too.
// Only world.ts provides them; the control plane's env has none of them at run time.
interface __BaseEnv_Env {
  QUERIES_PER_CLIENT: RateLimit;
  STATUS_PER_CLIENT: RateLimit;
  PUBLIC_BASE_URL: string;
  SIGNING_JWKS: string;
  ENVELOPE_REQUIRED_CLAIMS: string;
  LOG_VERIFIER_KEY: string;
  DASHBOARD_BASE_URL: string;
}
