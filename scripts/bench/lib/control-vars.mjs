// The control plane's variables and secrets as the benches run it: development auth, the
// record-signing key, and the transparency log as deployed (its origin, its key, no witnesses).

export const LOG_ORIGIN = "bench.localhost/log";

/** `auth`, `signing`, `logKeys`: key pairs from scripts/dev-keys.mjs. */
export function controlVars({ auth, signing, logKeys }) {
  return {
    ENVIRONMENT: "development",
    RESOLVER_BASE_URL: "http://127.0.0.1",
    AUTH_ISSUER: "https://issuer.invalid/",
    AUTH_AUDIENCE: "passport-dashboard",
    AUTH_JWKS_URL: "https://issuer.invalid/.well-known/jwks.json",
    DEV_AUTH_PUBLIC_JWK: auth.publicJwk,
    SIGNING_KEY: signing.privateJwk,
    LOG_ORIGIN,
    LOG_SIGNING_KEY: logKeys.privateJwk,
    LOG_WITNESSES: "[]",
  };
}
