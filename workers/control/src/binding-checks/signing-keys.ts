import {
  MAX_SIGNING_KEYS,
  MAX_WITHDRAWN_KEYS,
  type ObservedSigningKey,
  type PublicJwk,
  type PublicSigningKey,
} from "@passport/domain";
import { calculateJwkThumbprint, type JWK } from "jose";

// The check of a `signing_keys` binding (docs/bindings.md, docs/reciprocal-trust.md): the bound URL
// is a key directory, Web Bot Auth's HTTP Message Signatures directory or any JWK Set, that names
// the passport. What the service keeps of it is each public key it saw, as far as its RFC 7638
// thumbprint covers it (with kid and alg), so the record and the Signature Agent Card can publish
// the proven keys themselves; the document itself, and any private material, is never stored.

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
/** The members each key type's thumbprint covers (RFC 7638 section 3.2): all a verifier needs. */
const PUBLIC_MEMBERS: Record<PublicJwk["kty"], readonly (keyof PublicJwk)[]> = {
  OKP: ["crv", "kty", "x"],
  EC: ["crv", "kty", "x", "y"],
  RSA: ["e", "kty", "n"],
};
const BASE64URL = /^[A-Za-z0-9_-]{1,1400}$/;

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
    const members = typeof key.kty === "string" ? PUBLIC_MEMBERS[key.kty as PublicJwk["kty"]] : undefined;
    if (!members) {
      return { ok: false, reason: `key ${index} of ${url} is not an OKP, EC or RSA public key` };
    }
    let thumbprint: string;
    try {
      thumbprint = await calculateJwkThumbprint(key as JWK, "sha256");
    } catch {
      return { ok: false, reason: `key ${index} of ${url} lacks the members of its key type (RFC 7638)` };
    }
    if (proven.some((k) => k.thumbprint === thumbprint)) continue;
    const jwk = Object.fromEntries(members.map((name) => [name, key[name]])) as PublicJwk;
    if (members.some((name) => name !== "kty" && name !== "crv" && !BASE64URL.test(String(jwk[name])))) {
      return { ok: false, reason: `key ${index} of ${url} has a key member that is not base64url` };
    }
    const kid = label(key.kid, 200);
    const alg = label(key.alg, 32);
    proven.push({ thumbprint, ...(kid ? { kid } : {}), ...(alg ? { alg } : {}), jwk });
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

/** The keys a binding's last check found in its directory (those not marked withdrawn). */
export function currentKeys(stored: readonly ObservedSigningKey[] | null | undefined): PublicSigningKey[] {
  return (stored ?? []).filter((k) => !k.withdrawnAt);
}

/**
 * The keys to keep for a binding after a check that saw `seen` at `at`: those keys, then the keys
 * an earlier check proved that the directory no longer serves, each marked with when it was first
 * found gone (a key that comes back is current again). At most MAX_WITHDRAWN_KEYS withdrawn keys
 * are kept, the most recent first, so a verifier can tell a rotated-out key from one never proven.
 */
export function keysAfterCheck(
  stored: readonly ObservedSigningKey[] | null | undefined,
  seen: readonly PublicSigningKey[],
  at: string,
): ObservedSigningKey[] {
  const current = new Set(seen.map((k) => k.thumbprint));
  const gone = currentKeys(stored)
    .filter((k) => !current.has(k.thumbprint))
    .map((k) => ({ thumbprint: k.thumbprint, withdrawnAt: at }));
  const earlier = (stored ?? []).filter(
    (k): k is ObservedSigningKey & { withdrawnAt: string } => !!k.withdrawnAt && !current.has(k.thumbprint),
  );
  const withdrawn = [...gone, ...earlier]
    .sort((a, b) => b.withdrawnAt.localeCompare(a.withdrawnAt))
    .slice(0, MAX_WITHDRAWN_KEYS);
  return [...seen, ...withdrawn];
}
