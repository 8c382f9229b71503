import type { PassportRecord } from "./record.ts";
import type { SignatureAgentCard } from "./signature-agent-card-schema.ts";

// Derives the Signature Agent Card from a published record (docs/signature-agent-card.md). Kept
// apart from the zod schema so the resolver, which serves the card, does not bundle zod.

/** A key the card lists: proven by one signing_keys binding, current until that proof runs out. */
type CardKey = SignatureAgentCard["passport"]["keys"][number];
/** A proven key in the card's JWK Set, named by its thumbprint. */
type CardJwk = NonNullable<SignatureAgentCard["jwks"]>["keys"][number];

/**
 * The proven keys of the record: those of its `signing_keys` bindings that are verified and still
 * within their freshness, as a verifier counts them. A lapsed binding's keys are not listed.
 */
function provenKeys(record: PassportRecord, now: number): { keys: CardKey[]; jwks: CardJwk[] } {
  const keys: CardKey[] = [];
  const jwks: CardJwk[] = [];
  for (const binding of record.bindings) {
    const { verification } = binding;
    if (binding.class !== "signing_keys" || verification.state !== "verified" || !binding.keys) continue;
    if (Date.parse(verification.fresh_until) <= now) continue;
    for (const { jwk, ...key } of binding.keys) {
      keys.push({ ...key, directory: binding.value, fresh_until: verification.fresh_until });
      // A key two directories prove is one key of the set.
      if (jwk && !jwks.some((listed) => listed.kid === key.thumbprint)) {
        jwks.push({ ...jwk, kid: key.thumbprint, use: "sig" });
      }
    }
  }
  return { keys, jwks };
}

/** Where the resolver at `base` serves the card of `identityId`: also the card's `client_id`. */
function signatureAgentCardUrl(base: string, identityId: string): string {
  return `${base}/api/p/${identityId}/signature-agent-card.json`;
}

/**
 * The card of an agent passport with at least one proven key, as the resolver serves it from the
 * published record at `base`; null for any other record (docs/signature-agent-card.md). The proven
 * public keys are its `jwks`, each named by its thumbprint (Web Bot Auth's keyid), so a verifier
 * that knows only the drafts needs nothing else; `passport.keys` says which binding proves each.
 */
export function signatureAgentCard(record: PassportRecord, base: string, now: number): SignatureAgentCard | null {
  if (record.family !== "agent") return null;
  const { keys, jwks } = provenKeys(record, now);
  if (keys.length === 0) return null;
  const id = record.identity_id;
  return {
    // The draft's client_id is an https URL (a CIMD identity); a development resolver on http has none.
    ...(base.startsWith("https://") ? { client_id: signatureAgentCardUrl(base, id) } : {}),
    client_name: record.display_name ?? id,
    client_uri: `${base}/p/${id}`,
    ...(jwks.length > 0 ? { jwks: { keys: jwks } } : {}),
    passport: {
      identity_id: id,
      record_url: `${base}/api/p/${id}.json`,
      record_digest: record.digest,
      organisation: { id: record.organisation.id, name: record.organisation.name },
      ...(record.operator ? { operator: record.operator } : {}),
      keys,
    },
  };
}
