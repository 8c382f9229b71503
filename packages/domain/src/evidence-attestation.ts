/**
 * Asserted evidence counts for required claims only when a source the operator trusts signed it
 * (docs/evidence-attestation.md): a compact JWS by one of that source's keys whose payload is the
 * facts below. Typing a trusted source's name never counts on its own.
 */

/** Media type in the `typ` header of an evidence attestation. */
export const EVIDENCE_ATTESTATION_TYPE = "passport-evidence+jws";

/** The evidence members an attestation covers, as a member sends them. */
export interface AttestedEvidence {
  claim: string;
  source: string;
  scope: string;
  observed_at: string;
  fresh_until?: string | undefined;
  reference?: string | undefined;
}

/**
 * The payload an attester signs for one evidence item of one passport: the item's facts and the
 * passport it is about, so an attestation cannot be moved to another passport, claim or scope.
 * Timestamps are compared as instants, so any RFC 3339 spelling of the same time matches.
 * @example
 * const payload = attestationFacts("psp_…", { claim: "agent.operator_identity", source: "Auditor", scope: "…", observed_at: "2026-11-01T00:00:00Z" });
 * await new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: "ES256", kid, typ: EVIDENCE_ATTESTATION_TYPE }).sign(key);
 */
export function attestationFacts(identityId: string, evidence: AttestedEvidence): Record<string, string> {
  return {
    identity_id: identityId,
    claim: evidence.claim,
    source: evidence.source,
    scope: evidence.scope,
    observed_at: new Date(evidence.observed_at).toISOString(),
    ...(evidence.fresh_until ? { fresh_until: new Date(evidence.fresh_until).toISOString() } : {}),
    ...(evidence.reference ? { reference: evidence.reference } : {}),
  };
}

/**
 * The first member where a signed payload differs from the facts it must attest, or undefined when
 * it attests exactly them (no member more, none less).
 */
export function attestationMismatch(signed: unknown, expected: Record<string, string>): string | undefined {
  if (typeof signed !== "object" || signed === null || Array.isArray(signed)) return "payload";
  const payload = signed as Record<string, unknown>;
  for (const name of new Set([...Object.keys(payload), ...Object.keys(expected)])) {
    const have = payload[name];
    const want = expected[name];
    if (want === undefined || typeof have !== "string") return name;
    const instant = name === "observed_at" || name === "fresh_until";
    if (instant ? Date.parse(have) !== Date.parse(want) : have !== want) return name;
  }
  return undefined;
}
