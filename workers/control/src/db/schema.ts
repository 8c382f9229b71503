import { sql } from "drizzle-orm";
import {
  type AnySQLiteColumn,
  check,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";

const createdAt = () => text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`);

export const organisations = sqliteTable("organisations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  parentId: text("parent_id").references((): AnySQLiteColumn => organisations.id),
  createdAt: createdAt(),
});

export const members = sqliteTable(
  "members",
  {
    organisationId: text("organisation_id")
      .notNull()
      .references(() => organisations.id),
    subject: text("subject").notNull(),
    role: text("role", { enum: ["owner", "admin", "editor", "viewer"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.organisationId, t.subject] }), index("members_subject").on(t.subject)],
);

/** An organisation's own history: renamed, parent changed, recovered; who did it and when. */
export const organisationEvents = sqliteTable(
  "organisation_events",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    organisationId: text("organisation_id")
      .notNull()
      .references(() => organisations.id),
    actor: text("actor").notNull(),
    at: text("at").notNull(),
    kind: text("kind").notNull(),
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  },
  (t) => [index("organisation_events_organisation").on(t.organisationId, t.seq)],
);

/** The columns of a list item after the list's order, in the order the list indexes hold them. */
const LISTED = [
  "family",
  "displayName",
  "lifecycle",
  "availability",
  "environment",
  "version",
  "recordVersion",
  "updatedAt",
] as const;

/**
 * A list index: the organisation, the filter's column if any, the list's order (migration 0011),
 * then every other column of a list item, so a page is read from the index alone (0014).
 */
function listIndex(
  name: string,
  t: Record<(typeof LISTED)[number] | "organisationId" | "createdAt" | "id", AnySQLiteColumn>,
  filter?: "environment" | "lifecycle" | "family",
) {
  const rest = LISTED.filter((column) => column !== filter).map((column) => t[column]);
  return index(name).on(t.organisationId, ...(filter ? [t[filter]] : []), t.createdAt, t.id, ...rest);
}

export const passports = sqliteTable(
  "passports",
  {
    id: text("id").primaryKey(),
    organisationId: text("organisation_id")
      .notNull()
      .references(() => organisations.id),
    family: text("family", { enum: ["api", "agent"] }).notNull(),
    displayName: text("display_name"),
    relationship: text("relationship", { enum: ["responsible", "operator"] })
      .notNull()
      .default("responsible"),
    /** A separate organisation that operates the object while `organisationId` stays responsible (spec 2.1). */
    operatorOrganisationId: text("operator_organisation_id").references(() => organisations.id),
    lifecycle: text("lifecycle", { enum: ["active", "suspended", "revoked", "retired"] })
      .notNull()
      .default("active"),
    availability: text("availability", { enum: ["available", "degraded", "unavailable"] }),
    environment: text("environment"),
    version: text("version"),
    /** Agent passports: the model the agent runs, as context (spec 1.1; migration 0024). Both or neither. */
    modelProvider: text("model_provider"),
    modelName: text("model_name"),
    modelVersion: text("model_version"),
    stateAsOf: text("state_as_of").notNull(),
    recheckRequired: integer("recheck_required", { mode: "boolean" }).notNull().default(false),
    /**
     * When the re-evaluation behind `recheckRequired` began (docs/lifecycle.md#re-evaluation): the
     * bindings must be verified and the evidence renewed after it before the flag clears. Set and
     * cleared together with `recheckRequired` (reactivation, `clearRecheckIfPassed`, migration
     * 0021's backfill): code decides by this one; the flag stays as the column the published record
     * and the `passports_recheck` partial index read.
     */
    recheckSince: text("recheck_since"),
    duplicateOf: text("duplicate_of"),
    distinctReason: text("distinct_reason"),
    recordVersion: integer("record_version").notNull().default(1),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    listIndex("passports_org_created", t),
    listIndex("passports_org_environment_created", t, "environment"),
    listIndex("passports_org_lifecycle_created", t, "lifecycle"),
    listIndex("passports_org_family_created", t, "family"),
    // An operator's rename finds the records naming it (migration 0017).
    index("passports_operator").on(t.operatorOrganisationId),
    // The scheduler finds the passports awaiting re-evaluation (migration 0021).
    index("passports_recheck").on(t.recheckSince).where(sql`${t.recheckRequired} = 1`),
  ],
);

/** A stable number per passport in creation order: the rowid of its `passport_search` row (migration 0011). */
export const passportSearchKeys = sqliteTable(
  "passport_search_keys",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    passportId: text("passport_id")
      .notNull()
      .references(() => passports.id),
  },
  (t) => [uniqueIndex("passport_search_keys_passport").on(t.passportId)],
);

/**
 * The FTS5 table behind `GET /v1/passports?q=` (docs/storage.md), declared here only so queries can
 * name it: migration 0011 creates it as `CREATE VIRTUAL TABLE … USING fts5` and its triggers keep
 * it in step; drizzle-kit cannot express a virtual table, so a generated migration must not create it.
 */
export const passportSearch = sqliteTable("passport_search", {
  rowid: integer("rowid").notNull(),
  scope: text("scope").notNull(),
  terms: text("terms").notNull(),
});

export const bindings = sqliteTable(
  "bindings",
  {
    id: text("id").primaryKey(),
    passportId: text("passport_id")
      .notNull()
      .references(() => passports.id),
    class: text("class").notNull(),
    value: text("value").notNull(),
    label: text("label"),
    boundAt: text("bound_at").notNull(),
    /** Proof of control (docs/bindings.md): claimed until a check succeeds, lapsed when one fails. */
    verificationState: text("verification_state", { enum: ["claimed", "verified", "lapsed"] })
      .notNull()
      .default("claimed"),
    verificationMethod: text("verification_method", {
      enum: ["http_well_known", "dns_txt", "document_names_id", "provider_statement"],
    }),
    verifiedAt: text("verified_at"),
    verificationFreshUntil: text("verification_fresh_until"),
    verificationEvidenceId: text("verification_evidence_id"),
    lapsedAt: text("lapsed_at"),
    lapseReason: text("lapse_reason"),
    /** The environment and version of this bound value (migration 0019); a claim, not proven by its check. */
    environment: text("environment"),
    version: text("version"),
    lastCheckedAt: text("last_checked_at"),
    /** The outcome of the last check, success or the precise reason it failed. */
    lastCheckResult: text("last_check_result"),
    /** A random public token the claimant publishes for the first proof; not a secret. */
    challenge: text("challenge"),
    /**
     * When the scheduled re-check next takes this binding (docs/bindings.md, "Re-checks"): set for
     * verified and lapsed bindings, null for claimed ones. A claim moves it on by the lease.
     */
    nextCheckAt: text("next_check_at"),
    /** The scheduler's claim on the binding's pending re-check; its outcome is written only under it. */
    checkClaim: text("check_claim"),
    /** Scheduled re-checks in a row that did not prove control (the backoff's exponent). */
    checkFailures: integer("check_failures").notNull().default(0),
    /** The last few checks, oldest first: a JSON array of {at, outcome, reason} (CHECK_OUTCOMES). */
    checkLog: text("check_log").notNull().default("[]"),
    /**
     * signing_keys: the public keys (RFC 7638 thumbprint, kid, alg) the key directory held at the
     * last successful check (migration 0020); never a key itself, never private material.
     */
    observedKeys: text("observed_keys", { mode: "json" }).$type<{ thumbprint: string; kid?: string; alg?: string }[]>(),
  },
  (t) => [
    uniqueIndex("bindings_passport_class_value").on(t.passportId, t.class, t.value),
    index("bindings_class_value").on(t.class, t.value),
    index("bindings_next_check").on(t.nextCheckAt).where(sql`${t.nextCheckAt} IS NOT NULL`),
  ],
);

/**
 * Agent uses links (migration 0020, docs/reciprocal-trust.md): the API and MCP passports an agent
 * passport declares it calls. One row per link (the primary key); at most MAX_USES_LINKS per agent,
 * held by the migration's trigger. A link changes the agent's record only, never the target's. The
 * target's family is read from its passport (families never change; migration 0022 dropped the copy).
 */
export const passportUses = sqliteTable(
  "passport_uses",
  {
    agentId: text("agent_id")
      .notNull()
      .references(() => passports.id),
    // No foreign key: the target may be another organisation's passport in another shard
    // (docs/sharding.md); `usesAddition` checks it exists there. Its family is kept with the link
    // for the same reason (families never change), so the agent's record needs no other shard.
    targetId: text("target_id").notNull(),
    targetFamily: text("target_family", { enum: ["api", "agent"] }).notNull(),
    declaredAt: text("declared_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.agentId, t.targetId] }),
    // The declarers of a target, in declaration order (the API's list and its public count).
    index("passport_uses_target").on(t.targetId, t.declaredAt, t.agentId),
  ],
);

/**
 * What one check of a binding found (docs/bindings.md): `verified` the proof holds; `unreachable`
 * the host or resolver gave no answer (timeout, network or DNS failure, 5xx, 429), which never
 * lapses a fresh proof; `mismatch` an answer that contradicts the proof; `expired` the proof's
 * freshness ran out before an answer came; `error` the check itself failed (retried later).
 */
export const CHECK_OUTCOMES = ["verified", "unreachable", "mismatch", "expired", "error"] as const;

export const evidence = sqliteTable(
  "evidence",
  {
    id: text("id").primaryKey(),
    passportId: text("passport_id")
      .notNull()
      .references(() => passports.id),
    claim: text("claim").notNull(),
    source: text("source").notNull(),
    scope: text("scope").notNull(),
    reference: text("reference"),
    observedAt: text("observed_at").notNull(),
    freshUntil: text("fresh_until"),
    withdrawnAt: text("withdrawn_at"),
    /** observed: produced by the service's own check; asserted: written by a member. */
    basis: text("basis", { enum: ["observed", "asserted"] })
      .notNull()
      .default("asserted"),
    /**
     * Asserted evidence a trusted source attested (docs/evidence-attestation.md); items marked
     * trusted by their typed source alone were re-marked untrusted by migration 0015.
     */
    trustedSource: integer("trusted_source", { mode: "boolean" }).notNull().default(false),
    /** The kid of the attester's key that verified `attestation`; set exactly when trusted. */
    attestedKeyId: text("attested_key_id"),
    /** The attestation as sent (a compact JWS, public), kept so it can be checked again later. */
    attestation: text("attestation"),
    createdAt: createdAt(),
  },
  (t) => [index("evidence_passport").on(t.passportId)],
);

export const authority = sqliteTable(
  "authority",
  {
    id: text("id").primaryKey(),
    passportId: text("passport_id")
      .notNull()
      .references(() => passports.id),
    action: text("action").notNull(),
    /** Required on free-text entries; optional on structured ones (migration 0019). */
    context: text("context"),
    /** Legacy free text naming who granted it: never checked, so the entry counts as not established. */
    grantedBy: text("granted_by"),
    expiresAt: text("expires_at"),
    // A structured entry (docs/authority.md, migration 0019): what it applies to, its limits and
    // who granted it, as checked by the service when it was written. Set together or not at all.
    resource: text("resource"),
    amountValue: text("amount_value"),
    amountCurrency: text("amount_currency"),
    rateCount: integer("rate_count"),
    ratePer: text("rate_per", { enum: ["second", "minute", "hour", "day"] }),
    grantedByKind: text("granted_by_kind", { enum: ["organisation", "passport"] }),
    grantedById: text("granted_by_id"),
    grantedByRelationship: text("granted_by_relationship", { enum: ["responsible", "parent", "passport"] }),
    grantedByRole: text("granted_by_role", { enum: ["owner", "admin"] }),
    grantedAt: text("granted_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("authority_passport").on(t.passportId),
    // Every entry says something: free-text context, or a grant the service checked.
    check("authority_context_or_grant", sql`${t.context} IS NOT NULL OR ${t.grantedById} IS NOT NULL`),
    // A grant's kind is computed from the granting member's role as it is written (`insertGrant`):
    // a role lost in the meantime leaves it NULL beside the id, and the change rolls back.
    check("authority_grant_held", sql`(${t.grantedByKind} IS NULL) = (${t.grantedById} IS NULL)`),
  ],
);

/** Append-only history: one row per change, written in the same batch as the change. */
export const events = sqliteTable(
  "events",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    passportId: text("passport_id").notNull(),
    organisationId: text("organisation_id").notNull(),
    actor: text("actor").notNull(),
    at: text("at").notNull(),
    kind: text("kind").notNull(),
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    recordVersion: integer("record_version").notNull(),
  },
  // One event per record version: two writers racing from the same version cannot both commit.
  (t) => [uniqueIndex("events_passport_version").on(t.passportId, t.recordVersion)],
);

/**
 * Publications still owed to KV and the edge cache. A row is written in the same batch as the
 * change and deleted once the snapshot is in KV and the purge succeeded; anything left over is
 * retried by the scheduled drain.
 */
export const outbox = sqliteTable(
  "outbox",
  {
    passportId: text("passport_id").primaryKey(),
    recordVersion: integer("record_version").notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: text("next_attempt_at").notNull(),
    lastError: text("last_error"),
    /** 1 when owed only because an organisation changed: drained after every other due row (0013). */
    bulk: integer("bulk").notNull().default(0),
  },
  (t) => [index("outbox_due").on(t.bulk, t.nextAttemptAt)],
);

/**
 * Which manifest URLs each passport is published under in the resolver's manifest index
 * (KV keys `manifest:{hash}:{identity_id}`), so a later publication can remove the ones no longer
 * bound without reading KV back.
 */
export const publishedManifests = sqliteTable(
  "published_manifests",
  {
    passportId: text("passport_id").notNull(),
    manifestKey: text("manifest_key").notNull(),
  },
  (t) => [primaryKey({ columns: [t.passportId, t.manifestKey] })],
);

/**
 * Every publication of a passport record, in its shard's order (`seq`): the source of the signed
 * per-passport history and of the change feed the resolver serves. Each shard numbers its own, so
 * the feed's position is the service-wide `log_index` plus one (docs/signing.md), not `seq`.
 */
export const publications = sqliteTable(
  "publications",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    passportId: text("passport_id").notNull(),
    recordVersion: integer("record_version").notNull(),
    digest: text("digest").notNull(),
    previousDigest: text("previous_digest"),
    publishedAt: text("published_at").notNull(),
    changeKinds: text("change_kinds", { mode: "json" }).$type<string[]>().notNull(),
    /** When its history and feed entries were confirmed written to KV; null until then. */
    writtenAt: text("written_at"),
    /** Its entry's index in the transparency log; null until appended (docs/transparency-log.md). */
    logIndex: integer("log_index"),
  },
  (t) => [
    uniqueIndex("publications_passport_version").on(t.passportId, t.recordVersion),
    // The signed chain cannot fork: two versions never chain to the same predecessor.
    uniqueIndex("publications_passport_previous").on(t.passportId, t.previousDigest),
    index("publications_unlogged").on(t.seq).where(sql`${t.logIndex} IS NULL`),
  ],
);

/**
 * Parts of a passport's history moved out of D1 (docs/storage.md, "History archive"): each row names
 * one KV value (`key`) holding the passport's events with `seq` in [`firstSeq`, `lastSeq`] and its
 * publications with `seq` in [`publicationsFirstSeq`, `publicationsLastSeq`] (none when null). Written
 * when the value is in KV; `sealedAt` is set, in the batch that deletes those rows from D1, once KV's
 * propagation bound has passed since. Readers use sealed parts only, so each event is read from
 * exactly one place.
 */
export const historyArchives = sqliteTable(
  "history_archives",
  {
    passportId: text("passport_id").notNull(),
    firstSeq: integer("first_seq").notNull(),
    lastSeq: integer("last_seq").notNull(),
    publicationsFirstSeq: integer("publications_first_seq"),
    publicationsLastSeq: integer("publications_last_seq"),
    key: text("key").notNull(),
    writtenAt: text("written_at").notNull(),
    sealedAt: text("sealed_at"),
  },
  (t) => [
    primaryKey({ columns: [t.passportId, t.firstSeq] }),
    // The parts still to seal, oldest first.
    index("history_archives_unsealed").on(t.writtenAt).where(sql`${t.sealedAt} IS NULL`),
  ],
);

/** Where the archiving pass goes on in `events` (one row, `id` = 1): it walks the table in `seq` order. */
export const historyArchiveCursor = sqliteTable(
  "history_archive_cursor",
  {
    id: integer("id").primaryKey(),
    afterSeq: integer("after_seq").notNull(),
  },
  (t) => [check("history_archive_cursor_one", sql`${t.id} = 1`)],
);

/**
 * Change notifications (docs/events.md): an HTTPS endpoint a subscriber has confirmed (it echoed
 * the challenge) for one passport or for every passport of one organisation, and the event kinds
 * it wants. Written only once the endpoint echoed, so every row may be delivered to.
 */
export const notificationSubscriptions = sqliteTable(
  "notification_subscriptions",
  {
    id: text("id").primaryKey(),
    /** The authenticated subject that subscribed; only it sees and manages the subscription. */
    subscriber: text("subscriber").notNull(),
    endpointUrl: text("endpoint_url").notNull(),
    /** The endpoint's host name, what the per-endpoint cap counts. */
    endpointHost: text("endpoint_host").notNull(),
    targetKind: text("target_kind", { enum: ["passport", "organisation"] }).notNull(),
    targetId: text("target_id").notNull(),
    eventKinds: text("event_kinds", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: createdAt(),
    confirmedAt: text("confirmed_at").notNull(),
  },
  (t) => [
    uniqueIndex("notification_subscriptions_unique").on(t.subscriber, t.endpointUrl, t.targetKind, t.targetId),
    // The fan-out after a publication: who subscribed to this passport or its organisation.
    index("notification_subscriptions_target").on(t.targetKind, t.targetId),
    index("notification_subscriptions_host").on(t.endpointHost),
  ],
);

/**
 * One notification owed to one subscription: a publication it asked for. `id` is the Standard
 * Webhooks `webhook-id`, the same on every attempt (the receiver's idempotency key).
 */
export const notificationDeliveries = sqliteTable(
  "notification_deliveries",
  {
    id: text("id").primaryKey(),
    subscriptionId: text("subscription_id")
      .notNull()
      .references(() => notificationSubscriptions.id, { onDelete: "cascade" }),
    passportId: text("passport_id").notNull(),
    recordVersion: integer("record_version").notNull(),
    digest: text("digest").notNull(),
    previousDigest: text("previous_digest"),
    publishedAt: text("published_at").notNull(),
    changeKinds: text("change_kinds", { mode: "json" }).$type<string[]>().notNull(),
    eventKinds: text("event_kinds", { mode: "json" }).$type<string[]>().notNull(),
    /** pending until an attempt is answered 2xx (delivered) or the dead-letter queue gives up (dead). */
    state: text("state", { enum: ["pending", "delivered", "dead"] }).notNull(),
    createdAt: createdAt(),
    settledAt: text("settled_at"),
  },
  (t) => [
    index("notification_deliveries_subscription").on(t.subscriptionId, t.createdAt),
    // The retention pass: settled deliveries, oldest first.
    index("notification_deliveries_settled").on(t.settledAt).where(sql`${t.settledAt} IS NOT NULL`),
  ],
);

/** Each attempt to deliver a notification, as its subscriber sees it in the attempts log. */
export const notificationAttempts = sqliteTable(
  "notification_attempts",
  {
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => notificationDeliveries.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    at: text("at").notNull(),
    /** The endpoint's HTTP status, when it answered. */
    status: integer("status"),
    outcome: text("outcome", { enum: ["delivered", "failed", "dead-lettered"] }).notNull(),
    reason: text("reason"),
    durationMs: integer("duration_ms"),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })],
);

/**
 * Organisations fenced in this shard for a move to another (migration 0026, docs/sharding.md):
 * while a row is here, triggers refuse every insert and update of that organisation's rows in
 * this shard with `organisation-moving`, so a write that found the organisation here just before
 * the move began cannot land after its copy.
 */
export const organisationFences = sqliteTable("organisation_fences", {
  organisationId: text("organisation_id").primaryKey(),
  fencedAt: text("fenced_at").notNull(),
});
