// Standard Webhooks signatures, asymmetric form (docs/events.md, "Verifying a delivery"): the
// signed content is `{webhook-id}.{webhook-timestamp}.{body}` and `webhook-signature` is
// `v1a,{base64 Ed25519 signature}`. The private key is the Worker secret
// NOTIFICATION_SIGNING_KEY; its public half is listed in the resolver's key set
// (/.well-known/jwks.json), so a receiver needs no secret shared with the service.

const keys = new Map<string, Promise<CryptoKey>>();

function importSigningKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    const jwk = JSON.parse(secret) as JsonWebKey & { kid?: string };
    if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.d) {
      throw new Error("NOTIFICATION_SIGNING_KEY must be a private Ed25519 JWK");
    }
    key = crypto.subtle.importKey(
      "jwk",
      { kty: "OKP", crv: "Ed25519", x: jwk.x, d: jwk.d },
      { name: "Ed25519" },
      false,
      ["sign"],
    );
    keys.set(secret, key);
  }
  return key;
}

const base64 = (bytes: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(bytes)));

/** The three Standard Webhooks headers of one message: its id, the time of this attempt, the signature. */
export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * Signs one attempt of a message: the same `id` on every attempt (the receiver's idempotency key),
 * the attempt's own timestamp (the receiver's replay window).
 */
export async function signWebhook(
  secret: string | undefined,
  id: string,
  body: string,
  at: Date,
): Promise<WebhookHeaders> {
  if (!secret) throw new Error("NOTIFICATION_SIGNING_KEY is not configured; notifications are never sent unsigned");
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  const signature = await crypto.subtle.sign({ name: "Ed25519" }, await importSigningKey(secret), signed);
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1a,${base64(signature)}` };
}
