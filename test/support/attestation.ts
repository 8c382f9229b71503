import { env } from "cloudflare:workers";
import { type AttestedEvidence, attestationFacts, EVIDENCE_ATTESTATION_TYPE } from "@passport/domain";
import { CompactSign, importJWK, type JWK } from "jose";

/** The tests' one trusted evidence source (TRUSTED_EVIDENCE_ATTESTERS in vitest.config.ts). */
export const TRUSTED_AUDITOR = "Demo trusted auditor";

/**
 * An attestation of `evidence` on passport `identityId`: by the trusted auditor's key unless
 * another private JWK is given, over the facts `attestationFacts` builds unless others are given.
 */
export async function attest(
  identityId: string,
  evidence: AttestedEvidence,
  options: { jwk?: JWK; facts?: Record<string, string>; typ?: string } = {},
): Promise<string> {
  const jwk = options.jwk ?? (JSON.parse(env.TEST_AUDITOR_PRIVATE_JWK) as JWK);
  const facts = options.facts ?? attestationFacts(identityId, evidence);
  return new CompactSign(new TextEncoder().encode(JSON.stringify(facts)))
    .setProtectedHeader({ alg: "ES256", kid: jwk.kid, typ: options.typ ?? EVIDENCE_ATTESTATION_TYPE })
    .sign(await importJWK(jwk, "ES256"));
}

/** `evidence` with the trusted auditor's attestation for passport `identityId`. */
export async function attested<T extends AttestedEvidence>(identityId: string, evidence: T) {
  return { ...evidence, attestation: await attest(identityId, evidence) };
}
