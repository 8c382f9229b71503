import {
  AuthorityGrantor,
  AuthorityScope,
  Availability,
  authorityFields,
  BindingClass,
  BindingVerification,
  bindingVerification,
  evidenceFields,
  Family,
  IdentityId,
  LifecycleStatus,
  ModelContext,
  PublicSigningKey,
} from "@passport/domain";
import { z } from "zod";
import type { PassportSummaryRow, StoredPassport } from "../db/passports.ts";
import { CHECK_OUTCOMES, type events } from "../db/schema.ts";
import { FLAGGED_LIFECYCLES } from "../db/uses.ts";

const Timestamp = z.string().describe("RFC 3339 timestamp");

const CheckAttempt = z.object({
  at: Timestamp,
  outcome: z
    .enum(CHECK_OUTCOMES)
    .describe(
      "verified: the proof holds; unreachable: no answer (timeout, network or DNS failure, 408, 429, 5xx), which keeps a fresh proof; mismatch: an answer that does not prove control; expired: the proof ran out without an answer; error: the check failed and is tried again",
    ),
  reason: z.string().nullable(),
});

/** The binding's logged checks, newest first; a log that does not parse shows none. */
function checkAttempts(log: string): z.infer<typeof CheckAttempt>[] {
  try {
    const parsed = z.array(CheckAttempt).safeParse(JSON.parse(log));
    return parsed.success ? parsed.data.toReversed() : [];
  } catch {
    return [];
  }
}

const EvidenceView = z.object({
  id: z.string(),
  claim: z.string(),
  source: z.string(),
  scope: z.string(),
  reference: z.string().nullable(),
  observed_at: Timestamp,
  fresh_until: Timestamp.nullable(),
  basis: z.enum(["observed", "asserted"]),
  trusted_source: z.literal(true).nullable(),
  attested_by: z
    .object({ source: z.string(), key_id: z.string() })
    .nullable()
    .describe("The trusted source and key that attested this asserted evidence (docs/evidence-attestation.md)."),
  freshness: z.enum(["fresh", "expired", "undated"]).describe("At the time of this response."),
});

export const PassportView = z.object({
  identity_id: IdentityId,
  family: Family,
  display_name: z.string().nullable(),
  organisation: z.object({
    id: z.string(),
    name: z.string(),
    relationship: z.enum(["responsible", "operator"]),
    parent: z.object({ id: z.string(), name: z.string() }).nullable(),
  }),
  operator: z
    .object({ id: z.string(), name: z.string() })
    .nullable()
    .describe("A separate organisation that operates the object while `organisation` stays responsible (spec 2.1)."),
  state: z.object({
    lifecycle: LifecycleStatus,
    availability: Availability.nullable(),
    environment: z.string().nullable(),
    version: z.string().nullable(),
    model: ModelContext.nullable().describe("Agent passports: the model the agent runs, as context (spec 1.1)."),
    as_of: Timestamp,
    recheck_required: z.boolean(),
    duplicate_of: IdentityId.nullable(),
  }),
  bindings: z.array(
    z.object({
      id: z.string(),
      class: BindingClass,
      value: z.string(),
      label: z.string().nullable(),
      bound_at: Timestamp,
      verification: BindingVerification,
      last_check: z
        .object({ at: Timestamp, result: z.string() })
        .nullable()
        .describe("When the service last checked this binding, and what it found."),
      checks: z
        .array(CheckAttempt)
        .describe("The last few checks of this binding, newest first, each with its reason."),
      next_check_at: Timestamp.nullable().describe(
        "When the scheduled re-check next takes this binding (null: not scheduled).",
      ),
      environment: z
        .string()
        .nullable()
        .describe("The environment of this bound value (null: the passport's state.environment applies)."),
      version: z
        .string()
        .nullable()
        .describe("The version of this bound value (null: the passport's state.version applies)."),
      keys: z
        .array(PublicSigningKey)
        .nullable()
        .describe(
          "signing_keys bindings while verified: the public keys (RFC 7638 thumbprints, and the keys themselves) the directory held at the last successful check.",
        ),
    }),
  ),
  evidence: z.array(EvidenceView),
  authority: z.array(
    z.object({
      id: z.string(),
      action: z.string(),
      context: z.string().nullable(),
      granted_by: z
        .union([AuthorityGrantor, z.string()])
        .nullable()
        .describe(
          "Structured entries: the grantor the service checked (an object). Free-text entries: the text typed, never checked, or null.",
        ),
      scope: AuthorityScope.nullable().describe("What a structured entry applies to and its limits."),
      granted_at: Timestamp.nullable().describe("When a structured entry was granted."),
      expires_at: Timestamp.nullable(),
    }),
  ),
  uses: z
    .array(
      z.object({
        identity_id: IdentityId,
        family: Family,
        declared_at: Timestamp,
        display_name: z.string().nullable(),
        lifecycle: LifecycleStatus.nullable().describe(
          "The linked passport's lifecycle now; null only when the shard that holds it could not be read.",
        ),
        flagged: z
          .boolean()
          .describe("The linked passport is revoked or retired: a link to it should not be relied on."),
      }),
    )
    .describe(
      "Agent passports: the API and MCP passports this agent declares it calls (published in its record as `uses`). Links grant nothing.",
    ),
  record_version: z.int(),
  created_at: Timestamp,
  updated_at: Timestamp,
  resolver_url: z.url(),
  publication: z
    .object({
      status: z
        .enum(["published", "pending"])
        .describe(
          "published: this record version is signed and written to the resolver's store; pending: it is saved (committed) and its publication waits for a retry at next_attempt_at.",
        ),
      next_attempt_at: Timestamp.nullable(),
      status_url: z
        .url()
        .describe(
          "The resolver's status route for this passport: a signed status token of the current state, read from the source of truth and never cached (docs/freshness.md, Status token).",
        ),
    })
    .describe(
      "Saved, published, visible: every version in this answer is saved. `published` means signed and written; resolvers in every location serve it within 60 s plus the delay of its cache purge while the purge budget allows (90 s at the latest when it does not; clients may keep an answer 15 s more), not at once (docs/freshness.md). status_url states the current state at once.",
    ),
});
export type PassportView = z.infer<typeof PassportView>;

export const PassportSummary = PassportView.pick({
  identity_id: true,
  family: true,
  display_name: true,
  record_version: true,
  created_at: true,
  updated_at: true,
  resolver_url: true,
}).extend({
  organisation_id: z.string(),
  state: PassportView.shape.state.pick({ lifecycle: true, availability: true, environment: true, version: true }),
});

export const PassportPage = z.object({ items: z.array(PassportSummary), next_cursor: z.string().nullable() });

export const HistoryEvent = z.object({
  seq: z.int(),
  at: Timestamp,
  actor: z.string(),
  kind: z.string(),
  detail: z.record(z.string(), z.unknown()),
  record_version: z.int(),
});
export const HistoryPage = z.object({ items: z.array(HistoryEvent), next_after: z.int().nullable() });

function resolverUrl(env: Env, identityId: string): string {
  return `${env.RESOLVER_BASE_URL}/api/p/${identityId}.json`;
}

/** The resolver's status route for one passport (docs/freshness.md, Status token). */
function statusUrl(env: Env, identityId: string): string {
  return `${env.RESOLVER_BASE_URL}/api/p/${identityId}/status`;
}

export function passportEtag(recordVersion: number): string {
  return `"v${recordVersion}"`;
}

/** The Dashboard API's full view of a passport: stored state plus where its public proof lives. */
export function passportView(
  stored: StoredPassport,
  env: Env,
  pending?: { nextAttemptAt: string },
  now = Date.now(),
): PassportView {
  const { passport, organisation, parent, operator } = stored;
  return {
    identity_id: passport.id,
    family: passport.family,
    display_name: passport.displayName,
    organisation: {
      id: organisation.id,
      name: organisation.name,
      relationship: passport.relationship,
      parent: parent ? { id: parent.id, name: parent.name } : null,
    },
    operator: operator ? { id: operator.id, name: operator.name } : null,
    state: {
      lifecycle: passport.lifecycle,
      availability: passport.availability,
      environment: passport.environment,
      version: passport.version,
      model:
        passport.modelProvider && passport.modelName
          ? {
              provider: passport.modelProvider,
              name: passport.modelName,
              ...(passport.modelVersion ? { version: passport.modelVersion } : {}),
            }
          : null,
      as_of: passport.stateAsOf,
      recheck_required: passport.recheckRequired,
      duplicate_of: passport.duplicateOf,
    },
    bindings: stored.bindings.map((b) => ({
      id: b.id,
      class: b.class as BindingClass,
      value: b.value,
      label: b.label,
      bound_at: b.boundAt,
      verification: bindingVerification(b),
      last_check: b.lastCheckedAt ? { at: b.lastCheckedAt, result: b.lastCheckResult ?? "" } : null,
      checks: checkAttempts(b.checkLog),
      next_check_at: b.nextCheckAt,
      environment: b.environment,
      version: b.version,
      // The current keys only: a withdrawn one (kept for the record's withdrawn_keys) proves nothing.
      keys:
        b.class === "signing_keys" && b.verificationState === "verified" && b.observedKeys
          ? b.observedKeys.filter((k) => !k.withdrawnAt)
          : null,
    })),
    evidence: stored.evidence.map((e) => ({
      ...evidenceFields(e),
      freshness: !e.freshUntil ? "undated" : Date.parse(e.freshUntil) > now ? "fresh" : "expired",
    })),
    authority: stored.authority.map((a) => {
      const entry = authorityFields(a);
      return {
        id: a.id,
        action: entry.action,
        context: entry.context ?? null,
        granted_by: entry.granted_by ?? null,
        scope: "scope" in entry ? (entry.scope ?? null) : null,
        granted_at: "granted_at" in entry ? entry.granted_at : null,
        expires_at: entry.expires_at ?? null,
      };
    }),
    uses: stored.uses.map((u) => ({
      identity_id: u.targetId,
      family: u.targetFamily,
      declared_at: u.declaredAt,
      display_name: u.targetName,
      lifecycle: u.targetLifecycle,
      flagged: u.targetLifecycle !== null && isFlagged(u.targetLifecycle),
    })),
    record_version: passport.recordVersion,
    created_at: passport.createdAt,
    updated_at: passport.updatedAt,
    resolver_url: resolverUrl(env, passport.id),
    publication: pending
      ? { status: "pending", next_attempt_at: pending.nextAttemptAt, status_url: statusUrl(env, passport.id) }
      : { status: "published", next_attempt_at: null, status_url: statusUrl(env, passport.id) },
  };
}

/** A link whose other end is revoked or retired is flagged (docs/reciprocal-trust.md). */
export function isFlagged(lifecycle: string): boolean {
  return (FLAGGED_LIFECYCLES as readonly string[]).includes(lifecycle);
}

const DeclarerCounts = {
  identity_id: IdentityId,
  declared_by: z.int().describe("How many agent passports declare that they use this passport."),
  flagged: z.int().describe("How many of them are revoked or retired."),
  target_flagged: z.boolean().describe("This passport itself is revoked or retired: every link to it is flagged."),
};

/** The public count of an API's declarers: no identities, only numbers. */
export const PublicDeclarerCount = z.object(DeclarerCounts);

/** The API organisation's view of the agent passports declaring its passport. */
export const DeclarersPage = z.object({
  ...DeclarerCounts,
  items: z.array(
    z.object({
      identity_id: IdentityId,
      display_name: z.string().nullable(),
      organisation: z.object({ id: z.string(), name: z.string() }),
      lifecycle: LifecycleStatus,
      declared_at: Timestamp,
      flagged: z.boolean().describe("The declaring agent passport is revoked or retired."),
    }),
  ),
  next_cursor: z.string().nullable(),
});

export function passportSummary(passport: PassportSummaryRow, env: Env): z.infer<typeof PassportSummary> {
  return {
    identity_id: passport.id,
    family: passport.family,
    display_name: passport.displayName,
    organisation_id: passport.organisationId,
    state: {
      lifecycle: passport.lifecycle,
      availability: passport.availability,
      environment: passport.environment,
      version: passport.version,
    },
    record_version: passport.recordVersion,
    created_at: passport.createdAt,
    updated_at: passport.updatedAt,
    resolver_url: resolverUrl(env, passport.id),
  };
}

export function historyEvent(row: typeof events.$inferSelect): z.infer<typeof HistoryEvent> {
  return {
    seq: row.seq,
    at: row.at,
    actor: row.actor,
    kind: row.kind,
    detail: row.detail,
    record_version: row.recordVersion,
  };
}

/** The answer to a binding check: the outcome, why not, and exactly what to publish. */
export const BindingCheckView = z.object({
  binding_id: z.string(),
  result: z.enum(["verified", "not_proven"]),
  reason: z.string().nullable().describe("Why control was not proven (null when verified)."),
  instructions: z
    .object({
      well_known: z
        .object({ url: z.string(), content_type: z.literal("application/json"), document: z.unknown() })
        .optional()
        .describe("Publish this JSON document at this URL."),
      dns_txt: z.object({ name: z.string(), value: z.string() }).optional().describe("Or publish this TXT record."),
      document: z
        .object({ url: z.string(), must_name: z.array(z.string()) })
        .optional()
        .describe("Make the bound document name the identity id or its resolver URL."),
      key_directory: z
        .object({ url: z.string(), content_type: z.string(), document: z.unknown() })
        .optional()
        .describe(
          "A signing_keys binding: serve a JWK Set of public keys at this URL with a passport member naming the identity id (docs/reciprocal-trust.md).",
        ),
      package_metadata: z
        .object({ url: z.string(), field: z.string(), value: z.string() })
        .optional()
        .describe(
          "A package binding: publish a version whose package.json, as the registry serves it at this URL, has the member `field` naming the identity id (docs/bindings.md).",
        ),
      unprovable: z.string().optional().describe("Why the service cannot prove this binding: it stays claimed."),
    })
    .describe("What the claimant publishes so the binding can be verified."),
  passport: PassportView,
});

export const BatchResults = z.object({
  results: z
    .array(
      z.object({
        status: z.int().describe("What the item's own request would have answered: 201, 200, or a problem's status."),
        passport: PassportView.nullable(),
        problem: z
          .object({ type: z.string(), title: z.string(), status: z.int(), detail: z.string().optional() })
          .catchall(z.unknown())
          .nullable()
          .describe("The RFC 9457 problem document of a refused item."),
      }),
    )
    .describe("One result per item, in the order of the items."),
});
