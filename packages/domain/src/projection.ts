import {
  type BindingVerification,
  type PublicAuthority,
  type PublicSigningKey,
  type PublicUsesLink,
  RECORD_FORMAT,
  RECORD_FORMAT_VERSION,
  type UnsealedRecord,
  type WithdrawnSigningKey,
} from "./record.ts";

type Nullable<T> = T | null | undefined;

/**
 * A signing_keys binding's key as the control plane keeps it (the binding's observed keys): one
 * its directory served at the last successful check, or, with `withdrawnAt`, one an earlier check
 * proved that the directory has since stopped serving (then without its `jwk`: it proves nothing).
 */
export type ObservedSigningKey = PublicSigningKey & { withdrawnAt?: string };

/**
 * What the control plane stores about one passport, in the shape the projection needs. A binding
 * without a verification state is claimed; evidence without a basis is asserted.
 */
export interface PassportAggregate {
  passport: {
    id: string;
    family: "api" | "agent";
    displayName: Nullable<string>;
    relationship: "responsible" | "operator";
    lifecycle: "active" | "suspended" | "revoked" | "retired";
    availability: Nullable<"available" | "degraded" | "unavailable">;
    environment: Nullable<string>;
    version: Nullable<string>;
    /** Agent passports: the model the agent runs (spec 1.1); published only with provider and name. */
    modelProvider?: Nullable<string>;
    modelName?: Nullable<string>;
    modelVersion?: Nullable<string>;
    stateAsOf: string;
    recheckRequired: boolean;
    duplicateOf: Nullable<string>;
    recordVersion: number;
  };
  organisation: { id: string; name: string };
  parent: Nullable<{ id: string; name: string }>;
  /** A separate organisation that operates the object while `organisation` stays responsible (spec 2.1). */
  operator?: Nullable<{ id: string; name: string }>;
  bindings: {
    class: string;
    value: string;
    label: Nullable<string>;
    boundAt: string;
    verificationState?: "claimed" | "verified" | "lapsed";
    verificationMethod?: Nullable<"http_well_known" | "dns_txt" | "document_names_id" | "provider_statement">;
    verifiedAt?: Nullable<string>;
    verificationFreshUntil?: Nullable<string>;
    verificationEvidenceId?: Nullable<string>;
    lapsedAt?: Nullable<string>;
    lapseReason?: Nullable<string>;
    /** The environment and version of this bound value, where they differ from the passport's. */
    environment?: Nullable<string>;
    version?: Nullable<string>;
    /**
     * signing_keys: the public keys its directory held at the last successful check, and those
     * withdrawn before (docs/reciprocal-trust.md). manifest: the passport's proven keys that signed
     * the bound agent card at the last check (docs/bindings.md, "Signed agent cards").
     */
    observedKeys?: Nullable<ObservedSigningKey[]>;
  }[];
  evidence: {
    id: string;
    claim: string;
    source: string;
    scope: string;
    reference: Nullable<string>;
    observedAt: string;
    freshUntil: Nullable<string>;
    withdrawnAt: Nullable<string>;
    basis?: "observed" | "asserted";
    trustedSource?: boolean;
    /** The kid of the trusted source's key that verified the item's attestation. */
    attestedKeyId?: Nullable<string>;
  }[];
  authority: AuthorityEntry[];
  /** Agent uses links: the passports this agent declares it calls (docs/reciprocal-trust.md). */
  uses?: { targetId: string; targetFamily: "api" | "agent"; declaredAt: string }[];
}

/**
 * An authority entry as stored: free text (`context`, an unchecked `grantedBy`), or structured when
 * `grantedByKind` is set (the grantor the service checked, with scope and limits).
 */
export interface AuthorityEntry {
  action: string;
  context: Nullable<string>;
  grantedBy: Nullable<string>;
  expiresAt: Nullable<string>;
  resource?: Nullable<string>;
  amountValue?: Nullable<string>;
  amountCurrency?: Nullable<string>;
  rateCount?: Nullable<number>;
  ratePer?: Nullable<"second" | "minute" | "hour" | "day">;
  grantedByKind?: Nullable<"organisation" | "passport">;
  grantedById?: Nullable<string>;
  grantedByRelationship?: Nullable<"responsible" | "parent" | "passport">;
  grantedByRole?: Nullable<"owner" | "admin">;
  grantedAt?: Nullable<string>;
}

/** Copies only the members that hold a value: absent stays absent (spec 2.2 rule 3). */
function present<T extends Record<string, unknown>>(value: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], null>;
  };
}

const attested = (e: PassportAggregate["evidence"][number]) =>
  e.basis === "asserted" && e.trustedSource === true && typeof e.attestedKeyId === "string";

/** An evidence row in the wire names the record and the Dashboard API share (absent members as null). */
export function evidenceFields(e: PassportAggregate["evidence"][number]) {
  return {
    id: e.id,
    claim: e.claim,
    source: e.source,
    scope: e.scope,
    reference: e.reference ?? null,
    observed_at: e.observedAt,
    fresh_until: e.freshUntil ?? null,
    basis: e.basis ?? "asserted",
    // Only asserted evidence can be attested by a trusted source; observed evidence is the service's
    // own. Trust without the attesting key (items written before attestation) is not trust.
    trusted_source: attested(e) ? (true as const) : null,
    attested_by: attested(e) ? { source: e.source, key_id: e.attestedKeyId as string } : null,
  };
}

/**
 * A binding's proof state in the record's shape (record contract): `claimed` carries nothing else,
 * `verified` names how, when, until when and the evidence item, `lapsed` says when and why.
 */
export function bindingVerification(b: PassportAggregate["bindings"][number]): BindingVerification {
  if (
    b.verificationState === "verified" &&
    b.verificationMethod &&
    b.verifiedAt &&
    b.verificationFreshUntil &&
    b.verificationEvidenceId
  ) {
    return {
      state: "verified",
      method: b.verificationMethod,
      verified_at: b.verifiedAt,
      fresh_until: b.verificationFreshUntil,
      evidence: b.verificationEvidenceId,
    };
  }
  if (b.verificationState === "lapsed" && b.verificationMethod && b.lapsedAt) {
    return present({
      state: "lapsed" as const,
      method: b.verificationMethod,
      lapsed_at: b.lapsedAt,
      reason: b.lapseReason ?? "the proof is no longer current",
      verified_at: b.verifiedAt,
    });
  }
  return { state: "claimed" };
}

/**
 * A verified signing_keys binding's observed keys, with the public key itself where the check kept
 * it, and the keys it proved before that its directory no longer serves; none otherwise (a lapsed
 * binding's keys are not current).
 */
function signingKeys(b: PassportAggregate["bindings"][number]): {
  keys?: PublicSigningKey[];
  withdrawn_keys?: WithdrawnSigningKey[];
  card_signed_by?: string[];
} {
  const stored = b.observedKeys;
  if (b.verificationState !== "verified" || !stored || stored.length === 0) return {};
  // A manifest binding keeps the proven keys that signed its card at the last check.
  if (b.class === "manifest") return { card_signed_by: stored.map((k) => k.thumbprint) };
  if (b.class !== "signing_keys") return {};
  const keys: PublicSigningKey[] = [];
  const withdrawn: WithdrawnSigningKey[] = [];
  for (const k of stored) {
    if (k.withdrawnAt) withdrawn.push({ thumbprint: k.thumbprint, withdrawn_at: k.withdrawnAt });
    else keys.push(present({ thumbprint: k.thumbprint, kid: k.kid, alg: k.alg, jwk: k.jwk }));
  }
  if (keys.length === 0) return {};
  return { keys, ...(withdrawn.length > 0 ? { withdrawn_keys: withdrawn } : {}) };
}

/** The agent's uses links in the record's shape; none when it declares none. */
function usesLinks(aggregate: PassportAggregate): { uses?: PublicUsesLink[] } {
  const uses = aggregate.uses ?? [];
  if (aggregate.passport.family !== "agent" || uses.length === 0) return {};
  return {
    uses: uses.map((u) => ({ identity_id: u.targetId, family: u.targetFamily, declared_at: u.declaredAt })),
  };
}

/**
 * An authority entry in the record's shape: structured when the service checked its grantor (then
 * `granted_by` is an object), otherwise the free-text shape records have always carried.
 */
export function authorityFields(a: AuthorityEntry): PublicAuthority {
  if (a.grantedByKind && a.grantedById && a.grantedByRelationship && a.grantedAt && a.expiresAt) {
    const amount = a.amountValue && a.amountCurrency ? { value: a.amountValue, currency: a.amountCurrency } : undefined;
    const rate = a.rateCount && a.ratePer ? { count: a.rateCount, per: a.ratePer } : undefined;
    const limits = amount || rate ? present({ amount, rate }) : undefined;
    const scope = a.resource || limits ? present({ resource: a.resource, limits }) : undefined;
    return present({
      action: a.action,
      scope,
      granted_by: present({
        kind: a.grantedByKind,
        id: a.grantedById,
        relationship: a.grantedByRelationship,
        role: a.grantedByRole,
      }),
      granted_at: a.grantedAt,
      expires_at: a.expiresAt,
      context: a.context,
    });
  }
  return present({ action: a.action, context: a.context ?? "", granted_by: a.grantedBy, expires_at: a.expiresAt });
}

/** The model context of an agent passport, when it states one (provider and name, version optional). */
function modelContext(passport: PassportAggregate["passport"]) {
  if (passport.family !== "agent" || !passport.modelProvider || !passport.modelName) return undefined;
  return present({ provider: passport.modelProvider, name: passport.modelName, version: passport.modelVersion });
}

/**
 * Projects the stored passport to its public record. Only bounded proof leaves the control plane:
 * member subjects, internal notes, withdrawn evidence and acquisition context never do (spec 5.7).
 */
export function projectPublicRecord(
  aggregate: PassportAggregate,
  publishedAt: string,
  previousDigest?: string,
): UnsealedRecord {
  const { passport, organisation, parent, operator } = aggregate;
  const record = {
    record_format: RECORD_FORMAT,
    format_version: RECORD_FORMAT_VERSION,
    identity_id: passport.id,
    family: passport.family,
    ...present({ display_name: passport.displayName }),
    organisation: {
      id: organisation.id,
      name: organisation.name,
      relationship: passport.relationship,
      ...(parent ? { parent: { id: parent.id, name: parent.name } } : {}),
    },
    ...(operator ? { operator: { id: operator.id, name: operator.name } } : {}),
    bindings: aggregate.bindings.map((b) => ({
      ...present({ class: b.class, value: b.value, label: b.label, bound_at: b.boundAt }),
      verification: bindingVerification(b),
      ...present({ environment: b.environment, version: b.version }),
      ...signingKeys(b),
    })),
    state: present({
      lifecycle: passport.lifecycle,
      availability: passport.availability,
      environment: passport.environment,
      version: passport.version,
      model: modelContext(passport),
      as_of: passport.stateAsOf,
      recheck_required: passport.recheckRequired ? (true as const) : undefined,
      duplicate_of: passport.duplicateOf,
    }),
    evidence: aggregate.evidence.filter((e) => !e.withdrawnAt).map((e) => present(evidenceFields(e))),
    ...(aggregate.authority.length > 0
      ? {
          authority: aggregate.authority.map(authorityFields),
        }
      : {}),
    ...usesLinks(aggregate),
    record_version: passport.recordVersion,
    published_at: publishedAt,
    ...(previousDigest ? { previous_digest: previousDigest } : {}),
  };
  return record as UnsealedRecord;
}
