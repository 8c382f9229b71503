import { z } from "zod";

/**
 * The consumer's policy document (docs/policy.md): the one source of truth for its shape. Its
 * JSON Schema is generated from this and served at `/schemas/passport-policy.json`; the verifier
 * package reads the same shape by hand (`loadPolicy`, no runtime dependencies) and a property
 * test keeps the two in agreement. Every object is strict: a misspelt member is refused, never
 * silently ignored.
 */
const POLICY_FORMAT = "svc.passport_policy";
export const POLICY_VERSION = 1;

/** The verifier's outcome classes (OUTCOME_CLASSES in packages/verifier/src/outcome.ts; a test compares them). */
export const POLICY_OUTCOME_CLASSES = [
  "ok",
  "ok_signature_skipped",
  "not_found",
  "malformed_id",
  "family_mismatch",
  "organisation_mismatch",
  "environment_or_version_mismatch",
  "binding_mismatch",
  "binding_unverified",
  "missing_evidence",
  "stale",
  "state_not_operative",
  "network_failure",
  "signature_invalid",
  "unknown_key",
  "history_broken",
  "checkpoint_invalid",
  "witness_quorum_unmet",
  "rolled_back",
  "split_view",
  "inconsistent",
  "log_tampered",
  "checkpoint_stale",
  "not_in_log",
  "not_newest",
  "newest_unverified",
  "authority_not_held",
  "authority_expired",
  "authority_not_entitled",
] as const;

const DECISIONS = ["allow", "challenge", "deny", "delay", "re-resolve"] as const;
const PolicyDecision = z.enum(DECISIONS);

/** Limits shared with the verifier's reader (POLICY_LIMITS in packages/verifier/src/policy.ts). */
const LIMITS = { name: 200, text: 1000, list: 64, actions: 256 } as const;

/**
 * A policy's `versions`: one exact version (no range syntax), or a semantic-version range of
 * `^`, `~`, `x`, `>=`, `<` comparators joined by `||`. The same expression as VERSIONS_PATTERN in
 * packages/verifier/src/semver.ts (a test compares them).
 */
const VERSIONS_PATTERN =
  "^(?:(?![\\s\\S]*(?:[\\^~<>=|*\\s]|(?:^|\\.)[xX](?:\\.|$)))[\\s\\S]+|\\s*(?:\\^|~|>=|<=|>|<|=)?\\s*v?(?:0|[1-9]\\d*|[xX*])(?:\\.(?:0|[1-9]\\d*|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?(?:\\s+(?:\\^|~|>=|<=|>|<|=)?\\s*v?(?:0|[1-9]\\d*|[xX*])(?:\\.(?:0|[1-9]\\d*|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?)*(?:\\s*\\|\\|\\s*(?:\\^|~|>=|<=|>|<|=)?\\s*v?(?:0|[1-9]\\d*|[xX*])(?:\\.(?:0|[1-9]\\d*|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?(?:\\s+(?:\\^|~|>=|<=|>|<|=)?\\s*v?(?:0|[1-9]\\d*|[xX*])(?:\\.(?:0|[1-9]\\d*|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?)*)*\\s*)$";
export const POLICY_VERSIONS_PATTERN = VERSIONS_PATTERN;

const Name = z.string().min(1).max(LIMITS.name);
const LongText = z.string().min(1).max(LIMITS.text);
const List = <T extends z.ZodType>(item: T) => z.array(item).min(1).max(LIMITS.list);

const PolicyDuration = z
  .union([z.number().min(0), z.string().regex(/^\d+(\.\d+)?[smhd]?$/)])
  .describe("Seconds, or a number with a unit: 90s, 15m, 12h, 30d.");

const Consequence = z.enum(["lower", "changing", "higher"]);

const OrganisationExpectation = z.union([
  Name.describe("An organisation id."),
  z.strictObject({
    id: Name.optional(),
    parent: Name.optional(),
    relationship: z.enum(["responsible", "operator"]).optional(),
  }),
]);

const Amount = z.strictObject({
  value: z
    .string()
    .regex(/^(0|[1-9]\d{0,17})(\.\d{1,8})?$/)
    .describe('A decimal amount, e.g. "100.00".'),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .describe("ISO 4217 currency code."),
});

const RequiredAuthority = z
  .strictObject({
    action: Name.optional().describe("The action the grant must cover; default: the policy action's name."),
    resource: LongText.optional().describe("The resource the grant's scope must cover."),
    amount: Amount.optional().describe("The amount the grant's limit must cover, in the same currency."),
    granted_by: List(z.enum(["responsible", "parent", "passport"]))
      .optional()
      .describe('Who is entitled to grant it; default ["responsible", "parent"].'),
  })
  .describe("Authority the passport's record must hold for the action. Identity never stands in for it.");

const CallerPolicy = z
  .strictObject({
    required: z.boolean(),
    family: z.enum(["agent", "api"]).optional(),
    organisations: List(OrganisationExpectation).optional(),
    uses_link: z.boolean().optional(),
    authority: RequiredAuthority.optional(),
    consequence: Consequence.optional(),
    signature_window: PolicyDuration.optional(),
  })
  .describe("Reciprocal trust: what the calling agent must show.");

const ActionPolicy = z.strictObject({
  consequence: Consequence.optional().describe("Spec 4.1 freshness; default lower."),
  family: z.enum(["api", "agent"]).optional(),
  organisations: List(OrganisationExpectation).optional().describe("Any one of them."),
  environments: List(Name)
    .optional()
    .describe("Any one of them; checked against the matched binding's environment, else the passport's state."),
  versions: Name.regex(new RegExp(VERSIONS_PATTERN))
    .optional()
    .describe('A semantic-version range ("^2.1.0", ">=2 <3", "2.x"), or one exact version.'),
  bindings: List(z.strictObject({ class: Name, value: LongText.optional() })).optional(),
  claims: List(z.strictObject({ claim: Name, max_age: PolicyDuration.optional() })).optional(),
  authority: RequiredAuthority.optional(),
  lifecycle: List(Name).optional(),
  availability: List(Name).optional(),
  status_max_age: PolicyDuration.optional(),
  outcomes: z
    .partialRecord(z.enum(POLICY_OUTCOME_CLASSES), PolicyDecision)
    .optional()
    .describe("Decision per outcome class; one not listed gets the verifier's next step (proceed = allow)."),
  caller: CallerPolicy.optional(),
});

export const PassportPolicy = z.strictObject({
  policy_format: z.literal(POLICY_FORMAT),
  version: z.literal(POLICY_VERSION),
  defaults: ActionPolicy.optional().describe("Merged under every action."),
  actions: z
    .record(Name, ActionPolicy)
    .refine((actions) => Object.keys(actions).length <= LIMITS.actions, {
      message: `at most ${LIMITS.actions} actions`,
    })
    .describe("Per action, by a name the consumer chooses."),
});
export type PassportPolicy = z.infer<typeof PassportPolicy>;
