import { z } from "zod";
import { AgentActionEnvelope } from "./envelope-schema.ts";
import { ENVELOPE_VERSION } from "./envelope-version.ts";
import { PassportPolicy, POLICY_VERSION } from "./policy.ts";
import { IdentityId, PassportRecord, RECORD_FORMAT_VERSION } from "./record.ts";
import { PassportStatus, STATUS_TOKEN_TYPE } from "./status.ts";

/** Stable identifier of the published record schema; it names the format version, not a host. */
const PASSPORT_RECORD_SCHEMA_ID = `urn:svc:passport:schema:passport-record:${RECORD_FORMAT_VERSION}`;

/** The shape `identityIdDefect` accepts; the check character itself is beyond JSON Schema. */
const IDENTITY_ID_PATTERN = "^psp_[0-9a-hjkmnp-tv-z]{26}$";

/**
 * Draft 2020-12 JSON Schema of a zod schema whose identity ids keep a pattern: their check
 * character is a refinement JSON Schema cannot express, so it becomes the id's shape.
 */
function jsonSchemaWithIdentityIds(schema: z.ZodType) {
  return z.toJSONSchema(schema, {
    target: "draft-2020-12",
    unrepresentable: "throw",
    override: ({ zodSchema, jsonSchema }) => {
      if (zodSchema === IdentityId) jsonSchema.pattern = IDENTITY_ID_PATTERN;
    },
  });
}

/**
 * JSON Schema (draft 2020-12) of the public record, generated from the zod `PassportRecord` so the
 * two cannot drift. Refinements JSON Schema cannot express are replaced by their closest
 * equivalent: the identity id's check character becomes its shape.
 * @example
 * const schema = passportRecordJsonSchema();
 * schema.$id; // "urn:svc:passport:schema:passport-record:2026-10"
 */
export function passportRecordJsonSchema(): Record<string, unknown> {
  const schema = jsonSchemaWithIdentityIds(PassportRecord);
  return {
    $schema: schema.$schema,
    $id: PASSPORT_RECORD_SCHEMA_ID,
    title: "Passport record",
    description:
      "The public passport record served by the resolver at {base}/api/p/{identity_id}.json. Members whose information is absent are omitted, never null.",
    ...schema,
  };
}

const AGENT_ACTION_ENVELOPE_SCHEMA_ID = `urn:svc:passport:schema:agent-action-envelope:${ENVELOPE_VERSION}`;

/**
 * JSON Schema (draft 2020-12) of the agent action envelope (spec 2.4), generated from the zod
 * `AgentActionEnvelope`. Additional properties are allowed, as the spec says.
 */
export function agentActionEnvelopeJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(AgentActionEnvelope, { target: "draft-2020-12", unrepresentable: "throw" });
  return {
    $schema: schema.$schema,
    $id: AGENT_ACTION_ENVELOPE_SCHEMA_ID,
    title: "Agent action envelope",
    description:
      "Read-only routing object for an agent manifest, served at {base}/api/agent-envelope?target=…. It grants nothing; local policy decides.",
    ...schema,
  };
}

const PASSPORT_STATUS_SCHEMA_ID = `urn:svc:passport:schema:passport-status:${RECORD_FORMAT_VERSION}`;

/**
 * JSON Schema (draft 2020-12) of a status token's claims (docs/freshness.md), generated from the
 * zod `PassportStatus`.
 */
export function passportStatusJsonSchema(): Record<string, unknown> {
  const schema = jsonSchemaWithIdentityIds(PassportStatus);
  return {
    $schema: schema.$schema,
    $id: PASSPORT_STATUS_SCHEMA_ID,
    title: "Passport status token claims",
    description: `The payload of a status token: a compact JWS (ES256, typ ${STATUS_TOKEN_TYPE}, kid from the resolver's key set) answered by {base}/api/p/{identity_id}/status and stapled by providers in the Passport-Status header. Valid only with a signature by a pinned key and before exp.`,
    ...schema,
  };
}

const PASSPORT_POLICY_SCHEMA_ID = `urn:svc:passport:schema:passport-policy:${POLICY_VERSION}`;

/**
 * JSON Schema (draft 2020-12) of the consumer's policy document (docs/policy.md), generated from
 * the zod `PassportPolicy`, for editors and for checking a policy before it is loaded.
 */
export function passportPolicyJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(PassportPolicy, { target: "draft-2020-12", unrepresentable: "throw" });
  return {
    $schema: schema.$schema,
    $id: PASSPORT_POLICY_SCHEMA_ID,
    title: "Passport policy",
    description:
      "A consumer's decisions per action: what the passport must show (family, organisations, environments, version range, bindings, claims, authority, state) and how each outcome class maps to allow, challenge, deny, delay or re-resolve. Loaded by the verifier (loadPolicy, passport verify --policy).",
    ...schema,
  };
}
