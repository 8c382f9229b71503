import { isIdentityId } from "@passport/protocol";
import { z } from "zod";

/** The record format's name and revision, carried by every published record. */
export const RECORD_FORMAT = "svc.passport_record";
export const RECORD_FORMAT_VERSION = "2026-10";

export const PASSPORT_FAMILIES = ["api", "agent"] as const;
export const Family = z.enum(PASSPORT_FAMILIES);
export type Family = z.infer<typeof Family>;

/**
 * Binding classes of spec 2.2 (`manifest`, `mcp_surface` and `package` are agent-only), and
 * `signing_keys`: the key directory whose keys the passport's caller signs requests with
 * (docs/bindings.md, docs/reciprocal-trust.md).
 */
export const BINDING_CLASSES = [
  "endpoint",
  "gateway",
  "openapi",
  "service",
  "environment",
  "repository",
  "documentation",
  "manifest",
  "mcp_surface",
  "package",
  "signing_keys",
] as const;
export const BindingClass = z.enum(BINDING_CLASSES);
export type BindingClass = z.infer<typeof BindingClass>;

export const BINDING_CLASSES_BY_FAMILY: Record<Family, readonly BindingClass[]> = {
  api: ["endpoint", "gateway", "openapi", "service", "environment", "repository", "documentation", "signing_keys"],
  agent: BINDING_CLASSES,
};

export const LIFECYCLE_STATUSES = ["active", "suspended", "revoked", "retired"] as const;
export const LifecycleStatus = z.enum(LIFECYCLE_STATUSES);
export type LifecycleStatus = z.infer<typeof LifecycleStatus>;

const AVAILABILITY_SIGNALS = ["available", "degraded", "unavailable"] as const;
export const Availability = z.enum(AVAILABILITY_SIGNALS);
export type Availability = z.infer<typeof Availability>;

export const IdentityId = z
  .string()
  .refine(isIdentityId, { message: "not a well-formed identity id" })
  .describe("Persistent identity id: psp_ + 26 lowercase Crockford base32 characters, the last a check character.");

const Timestamp = z.iso.datetime({ offset: false }).describe("RFC 3339 UTC timestamp");
const Text = (max: number) => z.string().min(1).max(max);

/** How the service proved control of a binding (docs/bindings.md). */
const VERIFICATION_METHODS = ["http_well_known", "dns_txt", "document_names_id", "provider_statement"] as const;
export const VerificationMethod = z.enum(VERIFICATION_METHODS);
export type VerificationMethod = z.infer<typeof VerificationMethod>;

/**
 * Whether the claimant has shown it controls the bound value. A consumer treats a `verified`
 * binding whose `fresh_until` has passed as lapsed, and a binding without `verification` (records
 * published before it existed) as claimed.
 */
export const BindingVerification = z
  .discriminatedUnion("state", [
    z.object({ state: z.literal("claimed") }).strict(),
    z
      .object({
        state: z.literal("verified"),
        method: VerificationMethod,
        verified_at: Timestamp,
        fresh_until: Timestamp,
        evidence: Text(64).describe("Id of the observed evidence item in evidence[] that proves it."),
      })
      .strict(),
    z
      .object({
        state: z.literal("lapsed"),
        method: VerificationMethod,
        lapsed_at: Timestamp,
        reason: Text(500).describe("Why the last check failed or the proof ran out."),
        verified_at: Timestamp.optional().describe("The last successful check, if there was one."),
      })
      .strict(),
  ])
  .describe("Proof of control of the bound value: claimed (not proven), verified or lapsed.");
export type BindingVerification = z.infer<typeof BindingVerification>;

// Caller keys (docs/reciprocal-trust.md): the public keys a verified `signing_keys` binding's key
// directory held at the service's last successful check, by RFC 7638 thumbprint. Set only by the service.
export const MAX_SIGNING_KEYS = 10;
const Thumbprint = z
  .string()
  .regex(/^[A-Za-z0-9_-]{43}$/)
  .describe("RFC 7638 JWK SHA-256 thumbprint of the public key, base64url.");
const KeyParameter = z.string().regex(/^[A-Za-z0-9_-]{1,1400}$/);

/**
 * A public key exactly as far as its thumbprint covers it (RFC 7638 section 3.2: `crv`, `kty`, `x`
 * for OKP; with `y` for EC; `e`, `kty`, `n` for RSA): the key a signature verifies with, and no
 * member that could narrow or widen its use. Never private material: the check refuses a directory
 * holding any.
 */
export const PublicJwk = z
  .object({
    kty: z.enum(["OKP", "EC", "RSA"]),
    crv: Text(32).optional(),
    x: KeyParameter.optional(),
    y: KeyParameter.optional(),
    n: KeyParameter.optional(),
    e: KeyParameter.optional(),
  })
  .strict()
  .describe("The public key's RFC 7638 members, as the service read them from the key directory.");
export type PublicJwk = z.infer<typeof PublicJwk>;

export const PublicSigningKey = z
  .object({
    thumbprint: Thumbprint,
    kid: Text(200).optional(),
    alg: Text(32).optional(),
    jwk: PublicJwk.optional().describe(
      "The public key itself, as the directory served it at the check that proved it (absent from proofs made before keys were published).",
    ),
  })
  .strict();
export type PublicSigningKey = z.infer<typeof PublicSigningKey>;

// A key a signing_keys binding proved once and its directory no longer serves (a rotation): kept on
// the record for a while so a verifier can say "withdrawn" rather than "never proven".
export const MAX_WITHDRAWN_KEYS = 10;
export const WithdrawnSigningKey = z
  .object({
    thumbprint: Thumbprint,
    withdrawn_at: Timestamp.describe("The check that first found the key gone from the directory."),
  })
  .strict();
export type WithdrawnSigningKey = z.infer<typeof WithdrawnSigningKey>;

const PublicBinding = z
  .object({
    class: BindingClass,
    value: Text(2048),
    label: Text(200).optional(),
    bound_at: Timestamp,
    verification: BindingVerification,
    environment: Text(64)
      .optional()
      .describe(
        "The environment of this bound value (a staging endpoint under a production passport says staging); absent: the passport's state.environment applies. A claim: its check proves control, not the environment.",
      ),
    version: Text(64)
      .optional()
      .describe(
        "The version of this bound value; absent: the passport's state.version applies. A claim, like environment.",
      ),
    keys: z
      .array(PublicSigningKey)
      .min(1)
      .max(MAX_SIGNING_KEYS)
      .optional()
      .describe(
        "signing_keys bindings only, while verified: the public keys the key directory held at the service's last successful check.",
      ),
    withdrawn_keys: z
      .array(WithdrawnSigningKey)
      .min(1)
      .max(MAX_WITHDRAWN_KEYS)
      .optional()
      .describe(
        "signing_keys bindings only, while verified: keys an earlier check proved that the directory no longer serves, newest first. They prove nothing.",
      ),
    card_signed_by: z
      .array(Thumbprint)
      .min(1)
      .max(MAX_SIGNING_KEYS)
      .optional()
      .describe(
        "manifest bindings only, while verified: the thumbprints of the passport's proven keys (its verified, fresh signing_keys bindings) whose JWS signatures over the bound A2A agent card verified at the binding's last check.",
      ),
  })
  .strict();

// Agent uses links (docs/reciprocal-trust.md): the API (and MCP) passports an agent declares it
// calls. Context for policy; a link grants nothing and never changes the linked passport's record.
export const MAX_USES_LINKS = 50;
export const PublicUsesLink = z
  .object({
    identity_id: IdentityId,
    family: Family,
    declared_at: Timestamp,
  })
  .strict();
export type PublicUsesLink = z.infer<typeof PublicUsesLink>;

export const PublicEvidence = z
  .object({
    id: Text(64),
    claim: Text(200).describe("The claim this evidence supports, for example organisation.domain_control."),
    source: Text(500).describe("Who or what produced the evidence."),
    scope: Text(500).describe("What the evidence covers, and so what it does not."),
    reference: z.url().max(2048).optional(),
    observed_at: Timestamp,
    fresh_until: Timestamp.optional(),
    basis: z
      .enum(["observed", "asserted"])
      .describe("observed: produced by the service's own check; asserted: written by an organisation member."),
    trusted_source: z
      .literal(true)
      .optional()
      .describe("Only on asserted evidence a source the operator trusts attested (signed); see attested_by."),
    attested_by: z
      .object({
        source: Text(500).describe("The trusted source whose key signed the attestation."),
        key_id: Text(200).describe("The id (kid) of the operator-configured key that verified it."),
      })
      .strict()
      .optional()
      .describe("Who attested this asserted evidence; present exactly when trusted_source is."),
  })
  .strict();
export type PublicEvidence = z.infer<typeof PublicEvidence>;

const PublicOrganisation = z
  .object({
    id: Text(64),
    name: Text(200),
    relationship: z.enum(["responsible", "operator"]),
    parent: z
      .object({ id: Text(64), name: Text(200) })
      .strict()
      .optional(),
  })
  .strict();

const PublicOperator = z
  .object({ id: Text(64), name: Text(200) })
  .strict()
  .describe(
    "The organisation that operates the object, where it is not the organisation named in `organisation`, which stays responsible for it (spec 2.1). A claim, like `organisation`: it proves no runtime control.",
  );

/**
 * The model an agent runs (spec 1.1: context around the persistent identity). Changing it is a new
 * record version of the same identity id; it is stated by a member and proven by nothing.
 */
export const ModelContext = z
  .object({
    provider: Text(100).describe("Who provides the model, as the member states it, e.g. example-ai."),
    name: Text(200).describe("The model's name, e.g. example-model-large."),
    version: Text(64).optional().describe("The model's version or snapshot, when stated."),
  })
  .strict()
  .describe(
    "Agent passports: the model the agent runs, as context. A claim: it proves no runtime behaviour, and changing it keeps the identity id.",
  );
export type ModelContext = z.infer<typeof ModelContext>;

const PublicState = z
  .object({
    lifecycle: LifecycleStatus,
    availability: Availability.optional(),
    environment: Text(64).optional(),
    version: Text(64).optional(),
    model: ModelContext.optional(),
    as_of: Timestamp,
    recheck_required: z
      .literal(true)
      .optional()
      .describe(
        "Set after reactivation or another material change (responsibility, relationship or operator) until bindings and evidence are re-checked.",
      ),
    duplicate_of: IdentityId.optional(),
  })
  .strict();

/**
 * An action name (`payments.refund`) or a pattern covering several: a name ending in `.*`
 * (`payments.*`: every action under `payments.`) or `*` alone (every action).
 */
export const AUTHORITY_ACTION = /^(?:\*|[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*(?:\.\*)?)$/;
/** A decimal amount without sign or exponent: up to 15 integer and 6 fraction digits. */
export const DECIMAL_AMOUNT = /^(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,6})?$/;
/** An ISO 4217 alphabetic currency code's shape: three upper-case letters. */
export const CURRENCY_CODE = /^[A-Z]{3}$/;
export const RATE_PERIODS = ["second", "minute", "hour", "day"] as const;
export const GRANT_RELATIONSHIPS = ["responsible", "parent", "passport"] as const;
const GRANTING_ROLES = ["owner", "admin"] as const;

/** Free-text authority context (records before structured authority): readable, never established. */
const LegacyAuthority = z
  .object({
    action: Text(200),
    context: Text(1000),
    granted_by: Text(200).optional().describe("Who granted it, as typed by a member: never checked."),
    expires_at: Timestamp.optional(),
  })
  .strict()
  .describe("Free-text authority context: readable, but it counts as not established.");

const AuthorityAmount = z
  .object({
    value: z.string().regex(DECIMAL_AMOUNT).describe('A decimal amount, e.g. "100.00".'),
    currency: z.string().regex(CURRENCY_CODE).describe("ISO 4217 alphabetic code, e.g. EUR."),
  })
  .strict();

/**
 * The shape of a structured authority's scope, from the schemas of its leaves: the published
 * record (below) and the API's request (workers/control/src/api/requests.ts) share it, each with
 * its own checks on the resource text, the amount and the count.
 */
export function authorityScopeOf<
  Resource extends z.ZodType,
  Amount extends z.ZodType,
  Count extends z.ZodType,
>(leaves: { resource: Resource; amount: Amount; count: Count }) {
  return z
    .object({
      resource: leaves.resource
        .optional()
        .describe(
          'What the grant applies to, e.g. "org:acme/customers/*": compared exactly, or by prefix before a trailing *.',
        ),
      limits: z
        .object({
          amount: leaves.amount.optional().describe("The largest amount one action may move."),
          rate: z
            .object({ count: leaves.count, per: z.enum(RATE_PERIODS) })
            .strict()
            .optional()
            .describe("At most count actions per period."),
        })
        .strict()
        .optional(),
    })
    .strict();
}

export const AuthorityScope = authorityScopeOf({ resource: Text(500), amount: AuthorityAmount, count: z.int().min(1) });

export const AuthorityGrantor = z
  .object({
    kind: z.enum(["organisation", "passport"]),
    id: Text(64).describe("The organisation id, or the identity id of the granting passport."),
    relationship: z
      .enum(GRANT_RELATIONSHIPS)
      .describe(
        "responsible: the organisation the record names; parent: that organisation's parent; passport: an active passport of the responsible organisation.",
      ),
    role: z
      .enum(GRANTING_ROLES)
      .optional()
      .describe("The role the granting member held in that organisation (organisation grants)."),
  })
  .strict()
  .describe("Who granted the authority, as the service checked it when the entry was written.");
export type AuthorityGrantor = z.infer<typeof AuthorityGrantor>;

/** Structured authority (docs/authority.md): what, within which limits, granted by whom (checked), until when. */
const StructuredAuthority = z
  .object({
    action: z
      .string()
      .min(1)
      .max(200)
      .regex(AUTHORITY_ACTION)
      .describe("An action name, or a pattern ending in .* or *."),
    scope: AuthorityScope.optional(),
    granted_by: AuthorityGrantor,
    granted_at: Timestamp,
    expires_at: Timestamp.describe("Until when the grant applies."),
    context: Text(1000).optional().describe("A human description; nothing is decided by it."),
  })
  .strict()
  .describe("Structured authority: the service checked granted_by when the entry was written.");

/** Readers tell the shapes apart by `granted_by`: an object on structured entries. */
const PublicAuthority = z.union([StructuredAuthority, LegacyAuthority]);
export type PublicAuthority = z.infer<typeof PublicAuthority>;

/**
 * The public passport record (spec 2.1), exactly as the resolver serves it. Optional members are
 * omitted when the information is absent; nothing is filled in by inference (spec 2.2 rule 3).
 */
export const PassportRecord = z
  .object({
    record_format: z.literal(RECORD_FORMAT),
    format_version: z.literal(RECORD_FORMAT_VERSION),
    identity_id: IdentityId,
    family: Family,
    display_name: Text(200).optional(),
    organisation: PublicOrganisation,
    operator: PublicOperator.optional(),
    bindings: z.array(PublicBinding),
    state: PublicState,
    evidence: z.array(PublicEvidence),
    authority: z.array(PublicAuthority).min(1).optional(),
    uses: z
      .array(PublicUsesLink)
      .min(1)
      .max(MAX_USES_LINKS)
      .optional()
      .describe("Agent passports only: the API and MCP passports this agent declares it calls. Grants nothing."),
    record_version: z.int().min(1),
    published_at: Timestamp,
    previous_digest: z
      .string()
      .regex(/^sha-256:[A-Za-z0-9_-]{43}$/)
      .optional()
      .describe("Digest of the previously published version of this passport's record; absent for the first."),
    digest: z
      .string()
      .regex(/^sha-256:[A-Za-z0-9_-]{43}$/)
      .describe("SHA-256 of the RFC 8785 canonical JSON of the record without this member, base64url."),
  })
  .strict();
export type PassportRecord = z.infer<typeof PassportRecord>;
export type UnsealedRecord = Omit<PassportRecord, "digest">;
