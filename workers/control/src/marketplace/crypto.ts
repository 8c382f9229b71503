import { base64url } from "jose";

/**
 * The only places the registration token is handled: a keyed hash for idempotency, and AES-GCM
 * sealing for its trip through the queue. Neither the token nor the keys are ever logged.
 */
const encoder = new TextEncoder();

// The keys are configured in standard base64 (with `+`, `/` and padding), which jose's base64url refuses.
function keyBytes(base64: string, name: string): Uint8Array<ArrayBuffer> {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  if (bytes.byteLength !== 32) throw new Error(`${name} must be 32 bytes, base64-encoded`);
  return bytes;
}

const hmacKeys = new Map<string, Promise<CryptoKey>>();
const aesKeys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      "raw",
      keyBytes(secret, "MARKETPLACE_TOKEN_HASH_KEY"),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    hmacKeys.set(secret, key);
  }
  return key;
}

function aesKey(secret: string): Promise<CryptoKey> {
  let key = aesKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", keyBytes(secret, "MARKETPLACE_TOKEN_ENCRYPTION_KEY"), "AES-GCM", false, [
      "encrypt",
      "decrypt",
    ]);
    aesKeys.set(secret, key);
  }
  return key;
}

/**
 * HMAC-SHA-256 of `value` under `purpose`, as lowercase hex. The purpose keeps hashes of
 * different kinds of secret from ever being comparable.
 * @example
 * await keyedHash(env.MARKETPLACE_TOKEN_HASH_KEY, "registration-token", token); // "9f2c…"
 */
export async function keyedHash(secret: string, purpose: string, value: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(`${purpose}\u0000${value}`));
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A sealed token: AES-256-GCM ciphertext (with tag) and its 96-bit nonce, base64url. */
export interface SealedToken {
  iv: string;
  ciphertext: string;
}

/**
 * Encrypts the token for the queue. The acquisition id is the associated data, so a sealed token
 * moved onto another acquisition's message does not open.
 * @example
 * const sealed = await sealToken(key, acquisitionId, token);
 */
export async function sealToken(secret: string, acquisitionId: string, token: string): Promise<SealedToken> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(acquisitionId) },
    await aesKey(secret),
    encoder.encode(token),
  );
  return { iv: base64url.encode(iv), ciphertext: base64url.encode(new Uint8Array(ciphertext)) };
}

/** Opens a sealed token; throws if it was sealed under another key or for another acquisition. */
export async function openToken(secret: string, acquisitionId: string, sealed: SealedToken): Promise<string> {
  const plaintext = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: base64url.decode(sealed.iv), additionalData: encoder.encode(acquisitionId) },
    await aesKey(secret),
    base64url.decode(sealed.ciphertext),
  );
  return new TextDecoder().decode(plaintext);
}

/** A random, URL-safe reference (128 bits) with a readable prefix. */
export function randomReference(prefix: string): string {
  return `${prefix}${base64url.encode(crypto.getRandomValues(new Uint8Array(16)))}`;
}

/** Compares two secrets in constant time (by comparing their digests). */
export async function sameSecret(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(da, db);
}
