import { canonicalBytes, type PublicJwk } from "@passport/domain";
import { base64url, flattenedVerify, importJWK } from "jose";

// A manifest binding's A2A agent card may carry JWS signatures (A2A specification section 8.4):
// each over the RFC 8785 canonical JSON of the card without `signatures`, as a detached payload.
// When the passport's own proven keys (its verified, fresh signing_keys bindings) signed the card,
// the record says so on the manifest binding (docs/bindings.md, "Signed agent cards"): the same
// answer `verifyAgentCard` gives a consumer, computed once at the binding's check.

/** A key the passport proves now, with the public key the check read (keys proven before keys were kept have none). */
export interface ProvenKey {
  thumbprint: string;
  jwk?: PublicJwk;
}

/** The JWS algorithms accepted, each with the key type it needs. */
const ALGORITHMS: Record<string, { kty: string; crv: string }> = {
  EdDSA: { kty: "OKP", crv: "Ed25519" },
  Ed25519: { kty: "OKP", crv: "Ed25519" },
  ES256: { kty: "EC", crv: "P-256" },
};
const MAX_SIGNATURES = 10;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function headerOf(encoded: string): Record<string, unknown> | undefined {
  try {
    const header: unknown = JSON.parse(new TextDecoder().decode(base64url.decode(encoded)));
    return isObject(header) ? header : undefined;
  } catch {
    return undefined;
  }
}

async function verifies(entry: Record<string, unknown>, payload: string, key: ProvenKey, alg: string) {
  const wanted = ALGORITHMS[alg];
  if (!wanted || !key.jwk || key.jwk.kty !== wanted.kty || key.jwk.crv !== wanted.crv) return false;
  try {
    const publicKey = await importJWK({ ...key.jwk }, alg === "Ed25519" ? "EdDSA" : alg);
    await flattenedVerify(
      { protected: entry.protected as string, signature: entry.signature as string, payload },
      publicKey,
      { algorithms: [alg === "Ed25519" ? "EdDSA" : alg] },
    );
    return true;
  } catch {
    return false;
  }
}

/**
 * The thumbprints of the proven keys whose signatures over `document` (a manifest binding's card,
 * parsed) verify, in signature order; none when the card is unsigned, signed by other keys only,
 * or malformed. A signature names its key by `kid` (the thumbprint) in its protected or
 * unprotected header; one by a proven key that does not verify, or uses `crit`, voids the answer
 * (the card was changed after it was signed), as it does for a consumer.
 */
export async function cardSignedBy(document: unknown, proven: readonly ProvenKey[]): Promise<string[]> {
  if (!isObject(document) || !Array.isArray(document.signatures) || proven.length === 0) return [];
  // More than a consumer checks is malformed for it too (verifyAgentCard), so it is not signed here either.
  if (document.signatures.length > MAX_SIGNATURES) return [];
  const signatures: unknown[] = document.signatures;
  const { signatures: _signatures, ...unsigned } = document;
  let payload: string;
  try {
    payload = base64url.encode(canonicalBytes(unsigned));
  } catch {
    return [];
  }
  const signers: string[] = [];
  for (const entry of signatures) {
    if (!isObject(entry) || typeof entry.protected !== "string" || typeof entry.signature !== "string") return [];
    const header = headerOf(entry.protected);
    if (!header) return [];
    const unprotected = isObject(entry.header) ? entry.header : {};
    const kid = typeof header.kid === "string" ? header.kid : unprotected.kid;
    const key = proven.find((k) => k.thumbprint === kid);
    if (!key) continue;
    const alg = typeof header.alg === "string" ? header.alg : "";
    if (header.crit !== undefined || !(await verifies(entry, payload, key, alg))) return [];
    if (!signers.includes(key.thumbprint)) signers.push(key.thumbprint);
  }
  return signers;
}
