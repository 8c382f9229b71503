import { SIGNATURE_TYPE } from "@passport/domain";
import { CompactSign, importJWK, type JWK } from "jose";

const keys = new Map<string, { kid: string; key: CryptoKey | Uint8Array }>();

/** The record key of the Worker secret SIGNING_KEY, imported once per isolate. */
export async function signingKey(secret: string) {
  let entry = keys.get(secret);
  if (!entry) {
    const jwk = JSON.parse(secret) as JWK;
    if (jwk.kty !== "EC" || jwk.crv !== "P-256" || !jwk.d || !jwk.kid) {
      throw new Error("SIGNING_KEY must be a private P-256 JWK with a kid");
    }
    entry = { kid: jwk.kid, key: await importJWK(jwk, "ES256") };
    keys.set(secret, entry);
  }
  return entry;
}

/**
 * Signs `payload` as a compact JWS with detached payload (`header..signature`), ES256, with the
 * key id of the Worker secret SIGNING_KEY (docs/signing.md).
 */
export async function signDetached(secret: string | undefined, payload: Uint8Array): Promise<string> {
  if (!secret) throw new Error("SIGNING_KEY is not configured; records cannot be published unsigned");
  const { kid, key } = await signingKey(secret);
  const jws = await new CompactSign(payload).setProtectedHeader({ alg: "ES256", kid, typ: SIGNATURE_TYPE }).sign(key);
  const [header, , signature] = jws.split(".");
  return `${header}..${signature}`;
}
