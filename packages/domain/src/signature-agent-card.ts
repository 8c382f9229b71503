import { z } from "zod";
import { IdentityId, type PassportRecord, PublicSigningKey } from "./record.ts";

// The Signature Agent Card the resolver serves for an agent passport with proven keys
// (docs/signature-agent-card.md; draft-meunier-webbotauth-registry). Top-level names are OAuth
// client metadata names, as the draft uses; what the passport adds is under `passport`.

const Url = z.url().max(2048);
const Timestamp = z.iso.datetime({ offset: false });

const CardKey = PublicSigningKey.extend({
  directory: Url.describe("The signing_keys binding's key directory, which serves the key itself."),
  fresh_until: Timestamp.describe("When the binding's proof runs out unless it is re-checked."),
})
  .strict()
  .describe("A key a verified, fresh signing_keys binding proves; its thumbprint is the Web Bot Auth keyid.");

export const SignatureAgentCard = z
  .object({
    client_name: z.string().min(1).max(200).describe("The passport's display name, or its identity id."),
    client_uri: Url.describe("The passport's proof page on the resolver."),
    passport: z
      .object({
        identity_id: IdentityId,
        record_url: Url,
        record_digest: z.string().regex(/^sha-256:[A-Za-z0-9_-]{43}$/),
        organisation: z.object({ id: z.string().min(1).max(64), name: z.string().min(1).max(200) }).strict(),
        operator: z
          .object({ id: z.string().min(1).max(64), name: z.string().min(1).max(200) })
          .strict()
          .optional(),
        keys: z.array(CardKey).min(1),
      })
      .strict()
      .describe("The passport the card is derived from, and the keys it proves. Thumbprints only: no key material."),
  })
  .strict();
export type SignatureAgentCard = z.infer<typeof SignatureAgentCard>;

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
