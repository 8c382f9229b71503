import { z } from "zod";
import { IdentityId, PassportRecord, RECORD_FORMAT_VERSION } from "./record.ts";

/** Stable identifier of the published record schema; it names the format version, not a host. */
export const PASSPORT_RECORD_SCHEMA_ID = `urn:svc:passport:schema:passport-record:${RECORD_FORMAT_VERSION}`;

/** The shape `identityIdDefect` accepts; the check character itself is beyond JSON Schema. */
const IDENTITY_ID_PATTERN = "^psp_[0-9a-hjkmnp-tv-z]{26}$";

/**
 * JSON Schema (draft 2020-12) of the public record, generated from the zod `PassportRecord` so the
 * two cannot drift. Refinements JSON Schema cannot express are replaced by their closest
 * equivalent: the identity id's check character becomes its shape.
 * @example
 * const schema = passportRecordJsonSchema();
 * schema.$id; // "urn:svc:passport:schema:passport-record:2026-10"
 */
export function passportRecordJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(PassportRecord, {
    target: "draft-2020-12",
    unrepresentable: "throw",
    override: ({ zodSchema, jsonSchema }) => {
      if (zodSchema === IdentityId) jsonSchema.pattern = IDENTITY_ID_PATTERN;
    },
  });
  return {
    $schema: schema.$schema,
    $id: PASSPORT_RECORD_SCHEMA_ID,
    title: "Passport record",
    description:
      "The public passport record served by the resolver at {base}/api/p/{identity_id}.json. Members whose information is absent are omitted, never null.",
    ...schema,
  };
}
