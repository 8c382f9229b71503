import type { PassportRecord } from "./record.ts";
import type { SignatureAgentCard } from "./signature-agent-card-schema.ts";

// Derives the Signature Agent Card from a published record (docs/signature-agent-card.md). Kept
// apart from the zod schema so the resolver, which serves the card, does not bundle zod.

/** A key the card lists: proven by one signing_keys binding, current until that proof runs out. */
type CardKey = SignatureAgentCard["passport"]["keys"][number];

/**
 * The proven keys of the record: those of its `signing_keys` bindings that are verified and still
 * within their freshness, as a verifier counts them. A lapsed binding's keys are not listed.
 */
function provenKeys(record: PassportRecord, now: number): CardKey[] {
  const keys: CardKey[] = [];
  for (const binding of record.bindings) {
    const { verification } = binding;
    if (binding.class !== "signing_keys" || verification.state !== "verified" || !binding.keys) continue;
    if (Date.parse(verification.fresh_until) <= now) continue;
    for (const key of binding.keys) {
      keys.push({ ...key, directory: binding.value, fresh_until: verification.fresh_until });
    }
  }
  return keys;
}

/**
 * The card of an agent passport with at least one proven key, as the resolver serves it from the
 * published record at `base`; null for any other record (docs/signature-agent-card.md). The
 * record holds thumbprints, never key material (docs/reciprocal-trust.md), so the card names the
 * keys by thumbprint (Web Bot Auth's keyid) and the directory that serves each one.
 */
export function signatureAgentCard(record: PassportRecord, base: string, now: number): SignatureAgentCard | null {
  if (record.family !== "agent") return null;
  const keys = provenKeys(record, now);
  if (keys.length === 0) return null;
  const id = record.identity_id;
  return {
    client_name: record.display_name ?? id,
    client_uri: `${base}/p/${id}`,
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
