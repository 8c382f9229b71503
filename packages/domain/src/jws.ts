import canonicalize from "canonicalize";
import { base64url } from "./encoding.ts";

/** Media type in the `typ` header of every signature the control plane makes. */
export const SIGNATURE_TYPE = "passport+jws";

/** The bytes a signature covers: the RFC 8785 canonical JSON of `value`, UTF-8 encoded. */
export function canonicalBytes(value: unknown): Uint8Array {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError("value has no canonical JSON form");
  return new TextEncoder().encode(canonical);
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

export interface PublicJwk extends JsonWebKey {
  kid?: string;
}

export type SignatureCheck =
  | { valid: true; kid: string }
  | { valid: false; reason: "malformed" | "unknown_key" | "signature_invalid"; kid?: string };

/**
 * Verifies a compact JWS with detached payload (`header..signature`, RFC 7515 appendix F) over
 * `payload` against a set of ES256 public keys, using only WebCrypto.
 * @example
 * const check = await verifyDetachedJws(signature, canonicalBytes(record), jwks.keys);
 */
export async function verifyDetachedJws(
  jws: string,
  payload: Uint8Array,
  keys: readonly PublicJwk[],
): Promise<SignatureCheck> {
  const [encodedHeader, detached, encodedSignature] = jws.split(".");
  if (!encodedHeader || detached !== "" || !encodedSignature) return { valid: false, reason: "malformed" };
  let header: { alg?: string; kid?: string; typ?: string };
  try {
    header = JSON.parse(new TextDecoder().decode(fromBase64url(encodedHeader)));
  } catch {
    return { valid: false, reason: "malformed" };
  }
  if (header.alg !== "ES256" || typeof header.kid !== "string") return { valid: false, reason: "malformed" };
  const jwk = keys.find((key) => key.kid === header.kid);
  if (!jwk) return { valid: false, reason: "unknown_key", kid: header.kid };
  const key = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const signingInput = new TextEncoder().encode(`${encodedHeader}.${base64url(payload)}`);
  const ok = await crypto.subtle.verify(
    { name: "ECDSA", hash: "SHA-256" },
    key,
    fromBase64url(encodedSignature),
    signingInput,
  );
  return ok ? { valid: true, kid: header.kid } : { valid: false, reason: "signature_invalid", kid: header.kid };
}
