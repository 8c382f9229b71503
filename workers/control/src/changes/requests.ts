import {
  AUTHORITY_ACTION,
  Availability,
  authorityScopeOf,
  BINDING_CLASSES_BY_FAMILY,
  BindingClass,
  CURRENCY_CODE,
  canonicalBindingValue,
  canonicalUrl,
  credentialKind,
  DECIMAL_AMOUNT,
  displayTextRefusal,
  Family,
  GRANT_RELATIONSHIPS,
  isReservedEvidenceSource,
  LifecycleStatus,
  lookalikeRefusal,
  SERVICE_EVIDENCE_SOURCE,
} from "@passport/domain";
import { z } from "zod";

// What each passport change takes: the requests the rules in changes/ are written against. The routes
// validate bodies with these schemas (and document them in /openapi.json); api/requests.ts builds the
// rest of the HTTP vocabulary (queries, pages, batches, organisations) on them.

/**
 * Tenant text: trimmed, and refused when it carries a character that changes how it is shown
 * (controls, bidirectional overrides, invisible characters), wherever it is later shown.
 */
export const Text = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    // A pasted key's line breaks are reported as what it is: a credential (PublicText, noCredentials).
    .refine((value) => displayTextRefusal(value) === undefined || credentialKind(value) !== undefined, {
      error: (issue) => displayTextRefusal(String(issue.input)),
    });
/**
 * Free text that is published in the record or kept in the history: refused when it looks like a
 * credential (spec 2.3 rule 4, 5.5), whichever field a secret is pasted into.
 */
export const PublicText = (max: number) =>
  Text(max).refine((value) => !credentialKind(value), {
    error: (issue) =>
      `looks like a ${credentialKind(String(issue.input))}; credentials and secrets never belong in a passport`,
  });
const Timestamp = z.iso.datetime({ offset: true });
const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;
const WEB_URL = /^(?:https?|wss?):\/\//i;

/** What a value of each binding class must look like (spec 2.2). */
const BINDING_VALUE_RULES: Record<BindingClass, { pattern: RegExp; expected: string }> = {
  endpoint: { pattern: HTTP_URL, expected: "an http(s) URL of the API or agent endpoint" },
  gateway: { pattern: /^[\x21-\x7e]{1,512}$/, expected: "a gateway, cloud resource or provider id without spaces" },
  openapi: { pattern: HTTP_URL, expected: "an http(s) URL of the OpenAPI or interface description" },
  service: { pattern: /^[A-Za-z0-9][\w.:/@-]{0,199}$/, expected: "a service or workload name" },
  environment: { pattern: /^[a-z0-9][a-z0-9._-]{0,63}$/, expected: "an environment name such as production" },
  repository: {
    pattern: /^(?:https?:\/\/|git@|ssh:\/\/)[^\s]+$/i,
    expected: "a repository URL (https, ssh or git@host:path)",
  },
  documentation: { pattern: HTTP_URL, expected: "an http(s) URL of the documentation" },
  manifest: { pattern: HTTP_URL, expected: "an http(s) URL of the agent manifest" },
  mcp_surface: { pattern: /^(?:https?|wss?):\/\/[^\s]+$/i, expected: "an http(s) or ws(s) URL of the MCP/API surface" },
  package: {
    pattern: /^(?:pkg:[a-z][a-z0-9.+-]*\/[^\s]+|https?:\/\/[^\s]+)$/i,
    expected: "a package URL (pkg:type/namespace/name@version) or an http(s) URL",
  },
  signing_keys: {
    pattern: /^https:\/\/[^\s/?#]+[^\s]*$/i,
    expected: "an https URL of a key directory (/.well-known/http-message-signatures-directory or a JWK Set)",
  },
};

/** Refuses any string member that looks like a credential (spec 2.3 rule 4). */
function noCredentials<T extends Record<string, unknown>>(value: T, ctx: z.RefinementCtx): void {
  for (const [key, member] of Object.entries(value)) {
    const kind = typeof member === "string" ? credentialKind(member) : undefined;
    if (kind) {
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `looks like a ${kind}; credentials and secrets never belong in a passport`,
      });
    }
  }
}

/** Why a binding class cannot be bound to a passport of `family`, or undefined when it can. */
export function bindingClassRefusal(family: Family, bindingClass: BindingClass): string | undefined {
  return BINDING_CLASSES_BY_FAMILY[family].includes(bindingClass)
    ? undefined
    : `${bindingClass} bindings are not available to ${family} passports`;
}

/** The environment and version of one bound value (record contract, `bindings[].environment`). */
const BindingContextFields = {
  environment: Text(64).describe(
    "The environment of this bound value, e.g. staging under a production passport; a claim, not proven by its check.",
  ),
  version: Text(64).describe("The version of this bound value."),
};

export const BindingInput = z
  .object({
    class: BindingClass,
    value: Text(2048),
    label: Text(200).optional(),
    environment: BindingContextFields.environment.optional(),
    version: BindingContextFields.version.optional(),
  })
  .strict()
  .superRefine((binding, ctx) => {
    const rule = BINDING_VALUE_RULES[binding.class];
    if (!rule.pattern.test(binding.value)) {
      ctx.addIssue({ code: "custom", path: ["value"], message: `a ${binding.class} binding must be ${rule.expected}` });
    } else if (WEB_URL.test(binding.value)) {
      const canonical = canonicalUrl(binding.value);
      const lookalike = canonical ? lookalikeRefusal(new URL(canonical).hostname) : undefined;
      if (!canonical) {
        ctx.addIssue({ code: "custom", path: ["value"], message: "is not a valid URL (its host has an empty label)" });
      } else if (lookalike) {
        ctx.addIssue({
          code: "custom",
          path: ["value"],
          message: `its host could pass for another name: ${lookalike}; bind a name written in one script`,
        });
      }
    }
    noCredentials(binding, ctx);
  })
  // Stored, compared and indexed in one canonical form (docs/canonical-urls.md).
  .transform((binding) => ({ ...binding, value: canonicalBindingValue(binding.value) }));
export type BindingInput = z.infer<typeof BindingInput>;

export const CreatePassportRequest = z
  .object({
    organisation_id: Text(64).optional(),
    family: Family,
    display_name: PublicText(200).optional(),
    environment: PublicText(64).optional(),
    version: PublicText(64).optional(),
    bindings: z.array(BindingInput).max(50).default([]),
    distinct_object_reason: PublicText(1000)
      .optional()
      .describe("Why this is a materially distinct object although its primary binding matches an existing passport."),
  })
  .strict()
  .superRefine((body, ctx) => {
    // A passport with neither a name nor a binding says nothing about which object it identifies,
    // yet it would be published at once (docs/lifecycle.md#creation).
    if (body.display_name === undefined && body.bindings.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["display_name"],
        message: "name the passport or give it a binding, so the record says which object it identifies",
      });
    }
    body.bindings.forEach((binding, index) => {
      const refusal = bindingClassRefusal(body.family, binding.class);
      if (refusal) ctx.addIssue({ code: "custom", path: ["bindings", index, "class"], message: refusal });
    });
  });
export type CreatePassportRequest = z.infer<typeof CreatePassportRequest>;

export const UpdateFields = {
  display_name: PublicText(200).nullable().optional(),
  relationship: z
    .enum(["responsible", "operator"])
    .optional()
    .describe("The organisation's relationship to the object (spec 2.1): responsible for it, or operating it."),
  operator_organisation_id: Text(64)
    .nullable()
    .optional()
    .describe(
      "Another organisation that operates the object while this passport's organisation stays responsible (spec 2.1); you must be at least an editor there. null: none.",
    ),
};
export const SOMETHING_TO_UPDATE = {
  check: (body: { display_name?: unknown; relationship?: unknown; operator_organisation_id?: unknown }) =>
    body.display_name !== undefined || body.relationship !== undefined || body.operator_organisation_id !== undefined,
  message: "Send display_name, relationship, operator_organisation_id or any of them together.",
};

export const UpdatePassportRequest = z
  .object(UpdateFields)
  .strict()
  .refine(SOMETHING_TO_UPDATE.check, { message: SOMETHING_TO_UPDATE.message });
export type UpdatePassportRequest = z.infer<typeof UpdatePassportRequest>;

export const EvidenceInput = z
  .object({
    claim: Text(200),
    source: Text(500),
    scope: Text(500),
    reference: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    observed_at: Timestamp,
    fresh_until: Timestamp.optional(),
    attestation: z
      .string()
      .max(4096)
      .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, "must be a compact JWS")
      .optional()
      .describe(
        "A trusted source's signature over this item (docs/evidence-attestation.md): only attested evidence counts for required claims.",
      ),
  })
  .strict()
  .superRefine(({ attestation: _signature, ...evidence }, ctx) => {
    // The attestation is a public signature, not a credential (it holds nothing that grants access).
    noCredentials(evidence, ctx);
    if (isReservedEvidenceSource(evidence.source)) {
      ctx.addIssue({
        code: "custom",
        path: ["source"],
        message: `is reserved: "${SERVICE_EVIDENCE_SOURCE}" names what the service itself observed`,
      });
    }
    if (evidence.fresh_until && Date.parse(evidence.fresh_until) <= Date.parse(evidence.observed_at)) {
      ctx.addIssue({ code: "custom", path: ["fresh_until"], message: "must be later than observed_at" });
    }
    if (Date.parse(evidence.observed_at) > Date.now() + 5 * 60_000) {
      ctx.addIssue({ code: "custom", path: ["observed_at"], message: "cannot be in the future" });
    }
  });
export type EvidenceInput = z.infer<typeof EvidenceInput>;

/**
 * The model an agent runs, as the member states it (spec 1.1; the record's `state.model`): the
 * record's shape, with tenant text rules, since it is published.
 */
const ModelInput = z
  .object({
    provider: PublicText(100),
    name: PublicText(200),
    version: PublicText(64).optional(),
  })
  .strict()
  .describe(
    "Agent passports: the model the agent runs (provider, name, version); null clears it. Keeps the identity id.",
  );

export const StateChangeRequest = z
  .object({
    lifecycle: LifecycleStatus.optional(),
    availability: Availability.nullable().optional(),
    environment: Text(64).nullable().optional(),
    version: Text(64).nullable().optional(),
    model: ModelInput.nullable().optional(),
    recheck_completed: z
      .literal(true)
      .optional()
      .describe(
        "No longer accepted (409 recheck-pending): the re-check flag clears by itself once the checks pass (docs/lifecycle.md#re-evaluation). Ask for the checks now with POST /v1/passports/{id}/recheck.",
      ),
    reason: Text(1000).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    noCredentials(body, ctx);
    const { reason: _reason, ...changes } = body;
    if (Object.keys(changes).length === 0) ctx.addIssue({ code: "custom", path: [], message: "nothing to change" });
  });
export type StateChangeRequest = z.infer<typeof StateChangeRequest>;

/** Sets or clears (null) the environment and version of one binding. */
export const BindingContextRequest = z
  .object({
    environment: BindingContextFields.environment.nullable().optional(),
    version: BindingContextFields.version.nullable().optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    noCredentials(body, ctx);
    if (body.environment === undefined && body.version === undefined) {
      ctx.addIssue({ code: "custom", path: [], message: "send environment, version or both (null clears one)" });
    }
  });
export type BindingContextRequest = z.infer<typeof BindingContextRequest>;

/** Which relationship each kind of grantor may state. */
const RELATIONSHIPS_OF_KIND = { organisation: ["responsible", "parent"], passport: ["passport"] } as const;

const GrantorInput = z
  .object(
    {
      kind: z.enum(["organisation", "passport"]),
      id: Text(64).describe("The organisation id, or the identity id of the granting passport."),
      relationship: z
        .enum(GRANT_RELATIONSHIPS)
        .describe(
          "responsible: this passport's organisation; parent: its parent organisation; passport: an active passport of this passport's organisation.",
        ),
    },
    {
      error: (issue) =>
        issue.code === "invalid_type"
          ? "must be an object {kind, id, relationship}: who granted authority is checked by the service, never typed as text"
          : undefined,
    },
  )
  .strict()
  .superRefine((grantor, ctx) => {
    const allowed: readonly string[] = RELATIONSHIPS_OF_KIND[grantor.kind];
    if (!allowed.includes(grantor.relationship)) {
      ctx.addIssue({
        code: "custom",
        path: ["relationship"],
        message: `a grantor of kind ${grantor.kind} has relationship ${allowed.join(" or ")}`,
      });
    }
  })
  .describe(
    "Who grants the authority. The service checks it when the entry is written: you must hold the owner or admin role in the organisation named (for a parent, in the parent), and a granting passport must be an active passport of this passport's organisation. The role you hold is recorded.",
  );

const AmountInput = z
  .object({
    value: z
      .string()
      .regex(DECIMAL_AMOUNT, "must be a decimal amount such as 100.00: digits, at most 6 after the point, no sign")
      .refine((value) => Number(value) > 0, "must be more than zero"),
    currency: z.string().regex(CURRENCY_CODE, "must be an ISO 4217 currency code: three upper-case letters, e.g. EUR"),
  })
  .strict();

const ScopeInput = authorityScopeOf({
  resource: PublicText(500),
  amount: AmountInput,
  count: z.int().min(1).max(1_000_000_000),
});

/**
 * An authority entry. With `granted_by` it is structured (docs/authority.md): an action or action
 * pattern, an optional scope, who granted it (checked when written) and, required, until when.
 * Without `granted_by` it is free-text context (`context` required), which consumers read but which
 * never counts as established authority.
 */
export const AuthorityInput = z
  .object({
    action: Text(200).describe(
      "An action name (payments.refund) or, on a structured entry, a pattern: payments.* or *.",
    ),
    context: PublicText(1000).optional().describe("Plain words; required without granted_by."),
    scope: ScopeInput.optional(),
    granted_by: GrantorInput.optional(),
    expires_at: Timestamp.optional().describe("Until when it applies; in the future; required with granted_by."),
  })
  .strict()
  .superRefine((body, ctx) => {
    noCredentials(body, ctx);
    if (body.expires_at !== undefined && Date.parse(body.expires_at) <= Date.now()) {
      ctx.addIssue({ code: "custom", path: ["expires_at"], message: "must be in the future" });
    }
    if (body.granted_by === undefined) {
      if (body.context === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["context"],
          message: "is required on free-text authority; or give granted_by to add structured authority",
        });
      }
      if (body.scope !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["scope"],
          message: "needs granted_by: a scope nobody granted is not authority",
        });
      }
      return;
    }
    if (!AUTHORITY_ACTION.test(body.action)) {
      ctx.addIssue({
        code: "custom",
        path: ["action"],
        message: "must be an action name (letters, digits, _ and - in dot-separated parts), a name ending in .*, or *",
      });
    }
    if (body.expires_at === undefined) {
      ctx.addIssue({ code: "custom", path: ["expires_at"], message: "is required with granted_by: say until when" });
    }
  });
export type AuthorityInput = z.infer<typeof AuthorityInput>;

export const AuthorityExpiryRequest = z
  .object({
    expires_at: Timestamp.optional().describe(
      "When the entry stops applying; now when omitted. Only moves the expiry earlier, never later.",
    ),
  })
  .strict();
export type AuthorityExpiryRequest = z.infer<typeof AuthorityExpiryRequest>;
