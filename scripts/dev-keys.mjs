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

/**
 * A fresh transparency-log key (docs/transparency-log.md): the private Ed25519 JWK the control
 * plane's LOG_SIGNING_KEY secret holds, and the C2SP note verifier key
 * `<origin>+<hex key hash>+<base64(0x01 || public key)>` the resolver serves at /log/key.
 * @example
 * const { privateJwk, verifierKey } = await logKeyPair("passport.localhost/log");
 */
export async function logKeyPair(origin) {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const jwk = await exportJWK(privateKey);
  const key = Buffer.concat([Buffer.of(0x01), Buffer.from(jwk.x, "base64url")]);
  const hash = Buffer.from(await crypto.subtle.digest("SHA-256", Buffer.concat([Buffer.from(`${origin}\n`), key])));
  return {
    privateJwk: JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d }),
    verifierKey: `${origin}+${hash.subarray(0, 4).toString("hex")}+${key.toString("base64")}`,
  };
}
