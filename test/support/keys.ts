import { exportJWK, generateKeyPair } from "jose";

/** A fresh key pair made inside the test, unknown to every issuer the control plane trusts. */
export async function signingKeyPairInWorker(alg: "ES256" | "RS256") {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `stranger-${crypto.randomUUID().slice(0, 8)}`;
  return {
    publicJwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg }),
    privateJwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg }),
  };
}
