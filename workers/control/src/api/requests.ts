import { Family, IdentityId, LifecycleStatus } from "@passport/domain";
import { z } from "zod";
import {
  BindingInput,
  CreatePassportRequest,
  EvidenceInput,
  PublicText,
  SOMETHING_TO_UPDATE,
  StateChangeRequest,
  Text,
  UpdateFields,
} from "../changes/requests.ts";

/** An agent declares a passport it calls (docs/reciprocal-trust.md). */
export const UsesInput = z
  .object({ identity_id: IdentityId.describe("The API or MCP passport this agent calls.") })
  .strict();

/** The page of a listing: how many items, and the cursor a previous page answered with. */
const PageFields = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,400}$/)
    .optional(),
};

/** A page of a passport's history: the events after sequence `after`, oldest first. */
export const HistoryQuery = z
  .object({
    after: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("The previous page's next_after; 0 or absent: from the first event."),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .strict();

/** A page of the agent passports declaring an API's passport (createdAt/id cursor: declared_at, agent id). */
export const DeclarersQuery = z.object(PageFields).strict();

export const MarkDuplicateRequest = z.object({ survivor_id: IdentityId, reason: PublicText(1000) }).strict();
export const TransferRequest = z.object({ organisation_id: Text(64), reason: PublicText(1000) }).strict();

export const CreateOrganisationRequest = z.object({ name: PublicText(200), parent_id: Text(64).optional() }).strict();
export const UpdateOrganisationRequest = z
  .object({
    name: PublicText(200).optional(),
    parent_id: Text(64).nullable().optional().describe("The new parent (you must be its admin); null: no parent."),
    reason: PublicText(1000)
      .optional()
      .describe(
        "Why, kept in the organisation's history and its own passports' history (never in other organisations' passports).",
      ),
  })
  .strict()
  .refine((body) => body.name !== undefined || body.parent_id !== undefined, {
    message: "Send name, parent_id or both.",
  });
export type UpdateOrganisationRequest = z.infer<typeof UpdateOrganisationRequest>;
export const MemberRole = z.enum(["owner", "admin", "editor", "viewer"]);
export const PutMemberRequest = z.object({ role: MemberRole }).strict();

export const ListPassportsQuery = z
  .object({
    organisation_id: Text(64).optional(),
    family: Family.optional(),
    lifecycle: LifecycleStatus.optional(),
    environment: Text(64).optional(),
    q: Text(200)
      .regex(/[\p{L}\p{N}]/u, "must contain a letter or a digit")
      .optional()
      .describe(
        "Search: passports whose identity id, display name, environment, version or binding values have a word starting with each word of q (docs/storage.md). Combines with the filters; results in creation order.",
      ),
    ...PageFields,
  })
  .strict();
export type ListPassportsQuery = z.infer<typeof ListPassportsQuery>;

/** The most items one `POST /v1/passports/batch` may carry (docs/publication.md#batches). */
export const MAX_BATCH_ITEMS = 100;

/** What every batch item that changes one passport names: the passport, and the ETag read (like If-Match). */
const BatchTarget = {
  identity_id: IdentityId,
  if_match: z.string().min(1).max(64).optional().describe('Like If-Match: the ETag read, e.g. "v3".'),
};

/**
 * The batch items (docs/publication.md#batches). Each carries what its single request takes, nested
 * under one member, so the single request's schema (and whatever it gains, such as a binding's
 * own environment and version) is the item's.
 */
const BatchItemSchema = z.union([
  z.object({ create: CreatePassportRequest }).strict().describe("POST /v1/passports"),
  z
    .object({
      update: z
        .object({ ...BatchTarget, ...UpdateFields })
        .strict()
        .refine(SOMETHING_TO_UPDATE.check, { message: SOMETHING_TO_UPDATE.message }),
    })
    .strict()
    .describe("PATCH /v1/passports/{id}"),
  z
    .object({ add_binding: z.object({ ...BatchTarget, binding: BindingInput }).strict() })
    .strict()
    .describe("POST /v1/passports/{id}/bindings"),
  z
    .object({ remove_binding: z.object({ ...BatchTarget, binding_id: Text(64) }).strict() })
    .strict()
    .describe("DELETE /v1/passports/{id}/bindings/{bindingId}"),
  z
    .object({ add_evidence: z.object({ ...BatchTarget, evidence: EvidenceInput }).strict() })
    .strict()
    .describe("POST /v1/passports/{id}/evidence"),
  z
    .object({ withdraw_evidence: z.object({ ...BatchTarget, evidence_id: Text(64) }).strict() })
    .strict()
    .describe("DELETE /v1/passports/{id}/evidence/{evidenceId}"),
  z
    .object({ change_state: z.object({ ...BatchTarget, state: StateChangeRequest }).strict() })
    .strict()
    .describe(
      "PATCH /v1/passports/{id}/state: environment, version, availability (editor); lifecycle (admin, with its reason rules)",
    ),
]);

export const BatchRequest = z
  .object({
    items: z.array(BatchItemSchema).min(1).max(MAX_BATCH_ITEMS),
  })
  .strict();
export type BatchItem = z.infer<typeof BatchRequest>["items"][number];
