import { z } from "zod";
import { Availability, Family, IdentityId, LifecycleStatus } from "./record.ts";

/** How long a status token is valid after it was issued (docs/freshness.md, Status token). */
export const STATUS_TOKEN_LIFETIME_SECONDS = 60;

const Digest = z.string().regex(/^sha-256:[A-Za-z0-9_-]{43}$/);
const Seconds = z.number().int().nonnegative().describe("Seconds since the epoch");

/**
 * The claims of a status token (the payload of a compact JWS, ES256, signed with the record key):
 * the passport's current state as the control plane's authoritative state holds it when the
 * token is issued. `lifecycle` and `availability` are the committed state; `record_version` and
 * `digest` are the newest record that is signed and written to the resolver's store; `pending`
 * says a newer committed version is still owed to it (docs/freshness.md).
 */
export const PassportStatus = z
  .object({
    identity_id: IdentityId,
    family: Family,
    lifecycle: LifecycleStatus,
    availability: Availability.optional(),
    publication: z
      .enum(["published", "pending"])
      .describe(
        "published: the newest committed version is the one the resolver serves; pending: a newer committed version is still being published (the outbox retries it)",
      ),
    record_version: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("The newest published record version; absent while the first publication is pending"),
    digest: Digest.optional().describe("The digest of that record"),
    pending_version: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("The committed version not yet published; only when publication is pending"),
    next_attempt_at: z.iso
      .datetime({ offset: false })
      .optional()
      .describe("When the outbox retries the pending publication; a time already past means within a minute"),
    iat: Seconds.describe("Issued at"),
    exp: Seconds.describe("Expires at: issued at plus the token lifetime"),
  })
  .strict();
export type PassportStatus = z.infer<typeof PassportStatus>;

/** The status route's answer: the token, and the identity it is about. */
export const StatusAnswer = z.object({ identity_id: IdentityId, token: z.string().min(1) }).strict();
export type StatusAnswer = z.infer<typeof StatusAnswer>;

/** A publication sequencer's answer to a status request: a signed token, or that no passport has this id. */
export type StatusResult = { found: false } | ({ found: true; pending: boolean } & StatusAnswer);

/**
 * What the resolver may ask of a passport's publication sequencer (the control plane's Durable
 * Object, bound with script_name): the contract, so neither Worker's types pull in the other's sources.
 */
export interface StatusAuthorityApi {
  status(identityId: string): Promise<StatusResult>;
}
