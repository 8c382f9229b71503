import { canonicalJson } from "./canonical.ts";
import { sha256 } from "./sha256.ts";

const encoder = new TextEncoder();

/** Media type in the `typ` header of every signature the control plane makes over a record or page. */
export const SIGNATURE_TYPE = "passport+jws";
/** `typ` of a status token's protected header; a record signature (`passport+jws`) is never accepted as one. */
export const STATUS_TOKEN_TYPE = "passport-status+jwt";

/** base64url without padding (RFC 4648 section 5). */
export function base64urlEncode(bytes: ArrayBuffer | Uint8Array): string {
  let binary = "";
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Decodes base64url (padding optional); undefined when the text is not base64url. */
export function base64urlDecode(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * The content digest the service publishes: SHA-256 over the RFC 8785 canonical JSON, as
 * `sha-256:<base64url>`.
 * @example
 * const { digest, ...rest } = record;
 * (await canonicalDigest(rest)) === digest; // true for an intact record
 */
export async function canonicalDigest(value: unknown): Promise<string> {
  return digestOfCanonical(canonicalJson(value));
}

/** {@link canonicalDigest} of a value already in canonical JSON. */
export function digestOfCanonical(canonical: string): string {
  // Synchronous SHA-256: under Node's WebCrypto a digest is a thread-pool job (src/sha256.ts).
  return `sha-256:${base64urlEncode(sha256(encoder.encode(canonical)))}`;
}

/** Resolves a key id to a public key the caller trusts. */
export interface KeyLookup {
  key(kid: string): Promise<CryptoKey> | undefined;
}

export type SignatureCheck =
  | { valid: true; kid: string }
  | { valid: false; reason: "malformed" | "unknown_key" | "mismatch"; kid?: string };

/**
 * Verifies a compact JWS with detached payload (`header..signature`, RFC 7515 appendix F, ES256)
 * over the RFC 8785 canonical JSON of `value`, with the key its `kid` names among `keys`.
 * @example
 * const check = await verifyDetachedJws(response.headers.get("passport-signature") ?? "", record, keyRing);
 * if (!check.valid) console.log(check.reason);
 */
export function verifyDetachedJws(jws: string, value: unknown, keys: KeyLookup): Promise<SignatureCheck> {
  return verifyDetachedJwsOver(jws, canonicalJson(value), keys);
}

/** {@link verifyDetachedJws} over a payload already in canonical JSON. */
export async function verifyDetachedJwsOver(jws: string, canonical: string, keys: KeyLookup): Promise<SignatureCheck> {
  const [encodedHeader, detached, encodedSignature, ...rest] = jws.split(".");
  if (!encodedHeader || detached !== "" || !encodedSignature || rest.length > 0) {
    return { valid: false, reason: "malformed" };
  }
  const headerBytes = base64urlDecode(encodedHeader);
  const signature = base64urlDecode(encodedSignature);
  let header: { alg?: unknown; kid?: unknown };
  try {
    header = JSON.parse(new TextDecoder().decode(headerBytes));
  } catch {
    return { valid: false, reason: "malformed" };
  }
  if (!signature || header.alg !== "ES256" || typeof header.kid !== "string") {
    return { valid: false, reason: "malformed" };
  }
  const kid = header.kid;
  const key = keys.key(kid);
  if (!key) return { valid: false, reason: "unknown_key", kid };
  const signingInput = encoder.encode(`${encodedHeader}.${base64urlEncode(encoder.encode(canonical))}`);
  const ok = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, await key, signature, signingInput);
  return ok ? { valid: true, kid } : { valid: false, reason: "mismatch", kid };
}
