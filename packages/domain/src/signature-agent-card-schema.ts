import { z } from "zod";
import { IdentityId, PublicJwk, PublicSigningKey } from "./record.ts";

// The Signature Agent Card the resolver serves for an agent passport with proven keys
// (docs/signature-agent-card.md; draft-meunier-webbotauth-registry). Top-level names are OAuth
// client metadata names, as the draft uses; what the passport adds is under `passport`.

const Url = z.url().max(2048);
const Timestamp = z.iso.datetime({ offset: false });

const CardKey = PublicSigningKey.omit({ jwk: true })
  .extend({
    directory: Url.describe("The signing_keys binding's key directory, which serves the key itself."),
    fresh_until: Timestamp.describe("When the binding's proof runs out unless it is re-checked."),
  })
  .strict()
  .describe("A key a verified, fresh signing_keys binding proves; its thumbprint is the Web Bot Auth keyid.");

/** A proven key in the card's JWK Set: its public members, named by its thumbprint. */
const CardJwk = PublicJwk.extend({
  kid: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}$/)
    .describe("The key's RFC 7638 thumbprint: the keyid a Web Bot Auth signature by it carries."),
  use: z.literal("sig"),
}).strict();

export const SignatureAgentCard = z
  .object({
    client_id: Url.optional().describe(
      "The card's own URL: the draft's resolvable identity (CIMD), served exactly there. Only from a resolver on https.",
    ),
    client_name: z.string().min(1).max(200).describe("The passport's display name, or its identity id."),
    client_uri: Url.describe("The passport's proof page on the resolver."),
    jwks: z
      .object({ keys: z.array(CardJwk).min(1) })
      .strict()
      .optional()
      .describe(
        "The proven keys themselves (RFC 7517 JWK Set), as the service read them at the check that proved them; absent while every proven key was proven before keys were published.",
      ),
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
      .describe("The passport the card is derived from, and the keys it proves, by thumbprint."),
  })
  .strict();
export type SignatureAgentCard = z.infer<typeof SignatureAgentCard>;
