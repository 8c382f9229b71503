import {
  AUTHORITY_OUTCOMES,
  DECISIONS,
  POLICY_LIMITS as LIMITS,
  OUTCOME_CLASSES,
  POLICY_FORMAT,
  POLICY_VERSION,
  VERSIONS_PATTERN,
} from "@passport/protocol";
import { z } from "zod";

/**
 * The consumer's policy document (docs/policy.md): the one source of truth for its shape. Its
 * JSON Schema is generated from this and served at `/schemas/passport-policy.json`; the verifier
 * package reads the same shape by hand (`loadPolicy`, no runtime dependencies) and a property
 * test keeps the two in agreement. The format name and version, outcome classes, decisions,
 * limits and the `versions` grammar are @passport/protocol's, which both read. Every object is
 * strict: a misspelt member is refused, never silently ignored.
 */

/** The outcome classes a policy may map to a decision: the verifier's, then the authority outcomes. */
export const POLICY_OUTCOME_CLASSES = [...OUTCOME_CLASSES, ...AUTHORITY_OUTCOMES];

const PolicyDecision = z.enum(DECISIONS);

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
