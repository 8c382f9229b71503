import { ENVELOPE_VERSION, POLICY_VERSION, STATUS_TOKEN_TYPE } from "@passport/protocol";
import { z } from "zod";
import { AgentActionEnvelope } from "./envelope-schema.ts";
import { PassportPolicy } from "./policy.ts";
import { DecisionReceipt } from "./receipt.ts";
import { IdentityId, PassportRecord, RECORD_FORMAT_VERSION } from "./record.ts";
import { SignatureAgentCard } from "./signature-agent-card-schema.ts";
import { PassportStatus } from "./status.ts";
import { WebBotAuthSignatureAgentCard } from "./web-bot-auth-card-schema.ts";

/** The shape `identityIdDefect` accepts; the check character itself is beyond JSON Schema. */
const IDENTITY_ID_PATTERN = "^psp_[0-9a-hjkmnp-tv-z]{26}$";

/**
 * A published JSON Schema document (draft 2020-12) generated from a zod schema, so the two cannot
 * drift; `id` is a stable URN that names the format version, not a host. Refinements JSON Schema
 * cannot express are replaced by their closest equivalent: an identity id's check character
 * becomes the id's shape; the draft Signature Agent Card's rules across members become
 * `minProperties` and `not`.
 */
function documentSchema(schema: z.ZodType, id: string, title: string, description: string): Record<string, unknown> {
  const generated = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    unrepresentable: "throw",
    override: ({ zodSchema, jsonSchema }) => {
      if (zodSchema === IdentityId) jsonSchema.pattern = IDENTITY_ID_PATTERN;
      // The draft card's two rules across members, which zod states as refinements.
      if (zodSchema === WebBotAuthSignatureAgentCard) {
        jsonSchema.minProperties = 1;
        jsonSchema.not = { required: ["jwks", "jwks_uri"] };
      }
    },
  });
  return { $schema: generated.$schema, $id: id, title, description, ...generated };
}

/**
 * JSON Schema of the public record (`PassportRecord`).
 * @example
 * const schema = passportRecordJsonSchema();
 * schema.$id; // "urn:svc:passport:schema:passport-record:2026-10"
 */
export function passportRecordJsonSchema(): Record<string, unknown> {
  return documentSchema(
    PassportRecord,
    `urn:svc:passport:schema:passport-record:${RECORD_FORMAT_VERSION}`,
    "Passport record",
    "The public passport record served by the resolver at {base}/api/p/{identity_id}.json. Members whose information is absent are omitted, never null.",
  );
}

/** JSON Schema of the agent action envelope (spec 2.4, `AgentActionEnvelope`); additional properties are allowed, as the spec says. */
export function agentActionEnvelopeJsonSchema(): Record<string, unknown> {
  return documentSchema(
    AgentActionEnvelope,
    `urn:svc:passport:schema:agent-action-envelope:${ENVELOPE_VERSION}`,
    "Agent action envelope",
    "Read-only routing object for an agent manifest, served at {base}/api/agent-envelope?target=…. It grants nothing; local policy decides.",
  );
}

/** JSON Schema of a status token's claims (docs/freshness.md, `PassportStatus`). */
export function passportStatusJsonSchema(): Record<string, unknown> {
  return documentSchema(
    PassportStatus,
    `urn:svc:passport:schema:passport-status:${RECORD_FORMAT_VERSION}`,
    "Passport status token claims",
    `The payload of a status token: a compact JWS (ES256, typ ${STATUS_TOKEN_TYPE}, kid from the resolver's key set) answered by {base}/api/p/{identity_id}/status and stapled by providers in the Passport-Status header. Valid only with a signature by a pinned key and before exp.`,
  );
}

/**
 * JSON Schema of the consumer's policy document (docs/policy.md, `PassportPolicy`), for editors
 * and for checking a policy before it is loaded.
 */
export function passportPolicyJsonSchema(): Record<string, unknown> {
  return documentSchema(
    PassportPolicy,
    `urn:svc:passport:schema:passport-policy:${POLICY_VERSION}`,
    "Passport policy",
    "A consumer's decisions per action: what the passport must show (family, organisations, environments, version range, bindings, claims, authority, state) and how each outcome class maps to allow, challenge, deny, delay or re-resolve. Loaded by the verifier (loadPolicy, passport verify --policy).",
  );
}

/**
 * JSON Schema of the verifier's decision receipt (docs/verifier.md, Receipt; `DecisionReceipt`),
 * for a consumer that logs receipts and checks them.
 */
export function decisionReceiptJsonSchema(): Record<string, unknown> {
  return documentSchema(
    DecisionReceipt,
    "urn:svc:passport:schema:passport-decision-receipt:1",
    "Passport decision receipt",
    "What one decision of the verifier (Verifier.decide, decideCall) relied on: the policy's digest, the decision and outcome class, each side's record version, digest, signing key, log entry and status token digest, and each check. Re-checkable against the transparency log (verifyReceipt). It records a decision; it grants nothing.",
  );
}

/**
 * JSON Schema of the Signature Agent Card the resolver serves for an agent passport with proven
 * keys (docs/signature-agent-card.md, `SignatureAgentCard`).
 */
export function signatureAgentCardJsonSchema(): Record<string, unknown> {
  return documentSchema(
    SignatureAgentCard,
    `urn:svc:passport:schema:signature-agent-card:${RECORD_FORMAT_VERSION}`,
    "Signature Agent Card",
    "An agent passport's Signature Agent Card (draft-meunier-webbotauth-registry), served at {base}/api/p/{identity_id}/signature-agent-card.json and derived from the published record: OAuth client metadata names, the proven public keys as jwks (each kid its RFC 7638 thumbprint), and a passport member naming the binding that proves each key. Also valid against web-bot-auth-signature-agent-card.json.",
  );
}

/**
 * JSON Schema of any Signature Agent Card as draft-meunier-webbotauth-registry-04 defines it
 * (`WebBotAuthSignatureAgentCard`): the draft's own rules, not this service's card; the card the
 * resolver serves satisfies it.
 */
export function webBotAuthSignatureAgentCardJsonSchema(): Record<string, unknown> {
  return documentSchema(
    WebBotAuthSignatureAgentCard,
    "urn:svc:passport:schema:web-bot-auth-signature-agent-card:draft-meunier-webbotauth-registry-04",
    "Signature Agent Card (draft-meunier-webbotauth-registry-04)",
    "A signature agent's self-description as the Web Bot Auth registry draft defines it: OAuth client metadata (client_id, client_name, client_uri, logo_uri, contacts, jwks or jwks_uri, never both) and a web_bot_auth object. Every member is optional, at least one is present, and members a reader does not know are ignored. Written from the draft for checking cards; the draft, not this schema, is normative.",
  );
}
