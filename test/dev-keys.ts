import { exportJWK, generateKeyPair } from "jose";

/** A fresh signing key pair as JSON strings of the public and private JWK (with a kid). */
export async function signingKeyPair(
  alg: "ES256" | "RS256" = "ES256",
): Promise<{ publicJwk: string; privateJwk: string }> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `${alg.toLowerCase()}-${crypto.randomUUID().slice(0, 8)}`;
  return {
    publicJwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg, use: "sig" }),
    privateJwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg }),
  };
}
