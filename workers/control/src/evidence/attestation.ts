import {
  type AttestedEvidence,
  attestationFacts,
  attestationMismatch,
  EVIDENCE_ATTESTATION_TYPE,
} from "@passport/domain";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JWK, type JWTVerifyGetKey } from "jose";
import { Refusal } from "../failures.ts";

// Asserted evidence is trusted only when a source the operator configured signed it
// (docs/evidence-attestation.md): its text never decides.

type AttesterEnv = Pick<Env, "TRUSTED_EVIDENCE_ATTESTERS">;

interface Attesters {
  /** Each trusted source's public keys, by the exact source name. */
  keys: Map<string, JWTVerifyGetKey>;
  /** Exact source names by their folded spelling, so a look-alike name is caught too. */
  names: Map<string, string>;
}

const ALGORITHMS = ["ES256", "EdDSA"];

/** Case, width and spacing folded: "Demo  Trusted auditor" names the same source as "Demo trusted auditor". */
const fold = (name: string) => name.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();

// Parsed once per isolate and configuration.
const parsed = new Map<string, Attesters>();

/**
 * The operator's trusted evidence sources (TRUSTED_EVIDENCE_ATTESTERS): a JSON object from source
 * name to `{"keys": [public JWK, …]}`, each key with a `kid`. A private key is refused, so a
 * mistaken paste never becomes a readable variable.
 */
function trustedAttesters(env: AttesterEnv): Attesters {
  const config = env.TRUSTED_EVIDENCE_ATTESTERS || "{}";
  const known = parsed.get(config);
  if (known) return known;
  const problem = new Error(
    'TRUSTED_EVIDENCE_ATTESTERS must be a JSON object {"source name": {"keys": [public JWK with kid]}}',
  );
  let value: unknown;
  try {
    value = JSON.parse(config);
  } catch {
    throw problem;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw problem;
  const attesters: Attesters = { keys: new Map(), names: new Map() };
  for (const [source, entry] of Object.entries(value)) {
    const keys = (entry as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys) || keys.length === 0) throw problem;
    for (const key of keys as JWK[]) {
      if (typeof key !== "object" || key === null || typeof key.kid !== "string" || "d" in key) throw problem;
    }
    attesters.keys.set(source, createLocalJWKSet({ keys: keys as JWK[] }));
    attesters.names.set(fold(source), source);
  }
  parsed.set(config, attesters);
  return attesters;
}

/** The key that verified an item's attestation, and the attestation itself (kept for audit). */
export interface Attestation {
  keyId: string;
  jws: string;
}

const refused = (detail: string) =>
  new Refusal("attestation-invalid", { detail, errors: [{ path: "attestation", message: detail }] });

/**
 * Checks the attestation a member's evidence write carries. Evidence without one is plain asserted
 * evidence, unless it names a trusted source (in any spelling): that is refused, so a trusted
 * auditor's name is never shown on evidence the auditor did not sign. An attestation must be a
 * compact JWS by a key of exactly the named source over exactly this item of this passport.
 */
export async function verifiedAttestation(
  env: AttesterEnv,
  identityId: string,
  input: AttestedEvidence & { attestation?: string },
): Promise<Attestation | undefined> {
  const attesters = trustedAttesters(env);
  const trustedName = attesters.names.get(fold(input.source));
  if (input.attestation === undefined) {
    if (trustedName === undefined) return undefined;
    throw refused(
      `"${trustedName}" is a source this service trusts, so evidence naming it needs its attestation (a signature by its key over this item). Without one, name the source the evidence really comes from.`,
    );
  }
  const keys = trustedName === input.source ? attesters.keys.get(trustedName) : undefined;
  if (!keys) {
    throw refused(
      `"${input.source}" is not a source this service trusts${trustedName ? ` (the trusted one is spelled "${trustedName}")` : ""}; send the evidence without an attestation.`,
    );
  }
  let kid: string;
  let payload: Uint8Array;
  try {
    const header = decodeProtectedHeader(input.attestation);
    if (header.typ !== EVIDENCE_ATTESTATION_TYPE || typeof header.kid !== "string") throw new Error("header");
    kid = header.kid;
    ({ payload } = await compactVerify(input.attestation, keys, { algorithms: ALGORITHMS }));
  } catch {
    throw refused(
      `The attestation is not a ${EVIDENCE_ATTESTATION_TYPE} compact JWS that a key of "${trustedName}" signed.`,
    );
  }
  let signed: unknown;
  try {
    signed = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    signed = undefined;
  }
  const mismatch = attestationMismatch(signed, attestationFacts(identityId, input));
  if (mismatch) {
    throw refused(`The attestation does not cover this item: its ${mismatch} differs (or is missing).`);
  }
  return { keyId: kid, jws: input.attestation };
}
