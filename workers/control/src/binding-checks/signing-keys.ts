import { MAX_SIGNING_KEYS, type PublicSigningKey } from "@passport/domain";
import { calculateJwkThumbprint, type JWK } from "jose";

// The check of a `signing_keys` binding (docs/bindings.md, docs/reciprocal-trust.md): the bound URL
// is a key directory, Web Bot Auth's HTTP Message Signatures directory or any JWK Set, that names
// the passport. What the service keeps of it is the RFC 7638 thumbprint (with kid and alg) of each
// public key it saw; the document itself, and any key material, is never stored or published.

/**
 * The media types a key directory may be served as: Web Bot Auth's
 * (`/.well-known/http-message-signatures-directory`, draft-meunier-webbotauth-httpsig-directory),
 * a JWK Set's (RFC 7517), or plain JSON.
 */
export const DIRECTORY_MEDIA_TYPES = [
  "application/http-message-signatures-directory+json",
  "application/jwk-set+json",
  "application/json",
] as const;

/** A key larger than this (its JSON) is refused: the largest public RSA key in use is well under it. */
const MAX_KEY_BYTES = 2048;

/** JWK members that carry private or secret key material (RFC 7518 section 6). */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;
const PUBLIC_KEY_TYPES = new Set(["OKP", "EC", "RSA"]);

export type DirectoryReading = { ok: true; keys: PublicSigningKey[] } | { ok: false; reason: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The short string members kept beside a thumbprint, when they are visible ASCII (a kid is an
 * identifier; one that could change how the Dashboard shows text is left out); anything else too.
 */
function label(value: unknown, max: number): string | undefined {
  return typeof value === "string" && value.length <= max && /^[\x21-\x7e]+$/.test(value) ? value : undefined;
}

/**
 * Reads a key directory for `identityId`: the JWK Set names the passport (`"passport"` at the top
 * level, or on each key it covers) by its identity id or its resolver URL, holds at most
 * MAX_SIGNING_KEYS keys of at most MAX_KEY_BYTES each, and only public keys. A directory with any
 * private key member is refused whole, so a key published by mistake is never proven (nor kept).
 * The keys proven are those the passport names: every key when the set names it, otherwise the
 * keys that name it themselves.
 */
export async function readKeyDirectory(
  body: string,
  url: string,
  names: { identityId: string; resolverUrl: string },
): Promise<DirectoryReading> {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    return { ok: false, reason: `${url} is not valid JSON` };
  }
  if (!isObject(document) || !Array.isArray(document.keys)) {
    return { ok: false, reason: `${url} is not a JWK Set (no "keys" array)` };
  }
  const keys: unknown[] = document.keys;
  if (keys.length > MAX_SIGNING_KEYS) {
    return { ok: false, reason: `${url} holds ${keys.length} keys; at most ${MAX_SIGNING_KEYS} are checked` };
  }
  const namesUs = (value: unknown) => value === names.identityId || value === names.resolverUrl;
  const setNamesUs = namesUs(document.passport);
  const proven: PublicSigningKey[] = [];
  for (const [index, key] of keys.entries()) {
    if (!isObject(key)) return { ok: false, reason: `key ${index} of ${url} is not a JWK` };
    const secret = PRIVATE_MEMBERS.find((member) => member in key);
    if (secret) {
      return {
        ok: false,
        reason: `key ${index} of ${url} carries private key material ("${secret}"); publish public keys only, and replace that key`,
      };
    }
    if (new TextEncoder().encode(JSON.stringify(key)).byteLength > MAX_KEY_BYTES) {
      return { ok: false, reason: `key ${index} of ${url} is larger than ${MAX_KEY_BYTES} bytes` };
    }
    const covered = key.passport === undefined ? setNamesUs : namesUs(key.passport);
    if (!covered) continue;
    if (typeof key.kty !== "string" || !PUBLIC_KEY_TYPES.has(key.kty)) {
      return { ok: false, reason: `key ${index} of ${url} is not an OKP, EC or RSA public key` };
    }
    let thumbprint: string;
    try {
      thumbprint = await calculateJwkThumbprint(key as JWK, "sha256");
    } catch {
      return { ok: false, reason: `key ${index} of ${url} lacks the members of its key type (RFC 7638)` };
    }
    if (proven.some((k) => k.thumbprint === thumbprint)) continue;
    const kid = label(key.kid, 200);
    const alg = label(key.alg, 32);
    proven.push({ thumbprint, ...(kid ? { kid } : {}), ...(alg ? { alg } : {}) });
  }
  if (proven.length === 0) {
    return {
      ok: false,
      reason: setNamesUs
        ? `${url} names ${names.identityId} but holds no public key`
        : `${url} does not name ${names.identityId} or its resolver URL (a "passport" member of the key set or of a key)`,
    };
  }
  return { ok: true, keys: proven };
}
