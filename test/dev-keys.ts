import { exportJWK, generateKeyPair } from "jose";

/** A fresh ES256 key pair for development tokens, as JSON strings of the public and private JWK. */
export async function developmentKeyPair(): Promise<{ publicJwk: string; privateJwk: string }> {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = `dev-${crypto.randomUUID().slice(0, 8)}`;
  return {
    publicJwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" }),
    privateJwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: "ES256" }),
  };
}
