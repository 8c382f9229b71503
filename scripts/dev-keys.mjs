// Signing key pairs made on this machine: for development tokens, local record signing, key
// rotation, the benchmarks and the tests. Plain JavaScript with jose only, so Node scripts, the
// Vitest config and tests inside workerd all import this one module.
import { exportJWK, generateKeyPair } from "jose";

/**
 * A fresh signing key pair as JSON strings of the public and private JWK (both with `kid` and
 * `alg`), the form Worker variables and secrets hold them in.
 * @example
 * const { publicJwk, privateJwk } = await signingKeyPair("ES256");
 * JSON.parse(publicJwk).kid; // "es256-1a2b3c4d"
 */
export async function signingKeyPair(alg = "ES256", kid = `${alg.toLowerCase()}-${crypto.randomUUID().slice(0, 8)}`) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  return {
    publicJwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg, use: "sig" }),
    privateJwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg }),
  };
}
