import { formatVerifierKey } from "@passport/protocol";

export interface LogKey {
  privateKey: CryptoKey;
  /** `<origin>+<key hash>+<base64 key>`: what the resolver serves at /log/key and consumers pin. */
  verifierKey: string;
}

const keys = new Map<string, Promise<LogKey>>();

/**
 * The log's Ed25519 signing key from the Worker secret LOG_SIGNING_KEY: a private OKP JWK
 * (`{"kty":"OKP","crv":"Ed25519","d":…,"x":…}`, as `npm run keys -- log` and the deploy make it).
 * It is separate from SIGNING_KEY (records), so either can be rotated alone. Never logged.
 */
export function logKey(secret: string | undefined, origin: string): Promise<LogKey> {
  if (!secret) return Promise.reject(new Error("LOG_SIGNING_KEY is not configured; checkpoints cannot be signed"));
  const cacheKey = `${origin}\n${secret}`;
  let key = keys.get(cacheKey);
  if (!key) {
    key = importLogKey(secret, origin);
    keys.set(cacheKey, key);
    key.catch(() => keys.delete(cacheKey));
  }
  return key;
}

async function importLogKey(secret: string, origin: string): Promise<LogKey> {
  let jwk: JsonWebKey;
  try {
    jwk = JSON.parse(secret) as JsonWebKey;
  } catch {
    throw new Error("LOG_SIGNING_KEY is not JSON");
  }
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.d || !jwk.x) {
    throw new Error("LOG_SIGNING_KEY must be a private Ed25519 JWK");
  }
  const privateKey = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["sign"]);
  const publicKey = Uint8Array.from(atob(jwk.x.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
  return { privateKey, verifierKey: await formatVerifierKey(origin, publicKey) };
}
