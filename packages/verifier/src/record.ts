/**
 * The passport record as this package reads it: only the members a pre-call decision uses, each
 * checked for its type when it is present (spec 4.1 rule 1: parse only fields actually returned).
 * Absent optional members stay absent; nothing is filled in (spec 2.2 rule 3). Unknown members are
 * ignored, so a newer record format does not break an older verifier. A hand-written check keeps
 * the package free of runtime dependencies; the full schema is `PassportRecord` in the service's
 * domain package. Somewhat over 400 lines on purpose: each member's type sits in the same file as
 * the line that reads it, so the two cannot drift apart.
 */

/** Lifecycle statuses the service publishes today; an unknown value is carried as-is, never mapped. */
export type Lifecycle = "active" | "suspended" | "revoked" | "retired" | (string & {});
export type AvailabilitySignal = "available" | "degraded" | "unavailable" | (string & {});

export interface RecordOrganisation {
  id: string;
  name?: string;
  relationship?: string;
  parent?: { id: string; name?: string };
}

/**
 * Whether the service has proven that the passport's holder controls a binding's value
 * (docs/record-format.md). A binding published without it is only claimed.
 */
export interface BindingVerification {
  state: "claimed" | "verified" | "lapsed" | (string & {});
  /** How control was proven: `http_well_known`, `dns_txt`, `document_names_id`, `provider_statement`. */
  method?: string;
  verified_at?: string;
  /** A `verified` binding past this time counts as lapsed. */
  fresh_until?: string;
  /** The id of the observed evidence item that proves it. */
  evidence?: string;
  lapsed_at?: string;
  reason?: string;
}

export interface RecordBinding {
  class: string;
  value: string;
  label?: string;
  bound_at?: string;
  verification?: BindingVerification;
  /** The environment of this bound value (a staging endpoint under a production passport says `staging`). */
  environment?: string;
  /** The version of this bound value. */
  version?: string;
  /** signing_keys bindings while verified: the public keys the service saw at its last check. */
  keys?: RecordSigningKey[];
  /** signing_keys bindings while verified: keys an earlier check proved that the directory no longer serves. */
  withdrawn_keys?: RecordWithdrawnKey[];
  /** manifest bindings while verified: thumbprints of the passport's proven keys that signed the bound agent card. */
  card_signed_by?: string[];
}

/** A key a `signing_keys` binding proved once and its directory has since stopped serving: it proves nothing. */
export interface RecordWithdrawnKey {
  thumbprint: string;
  /** The check that first found it gone. */
  withdrawn_at: string;
}

/** A caller's public signing key a verified `signing_keys` binding proves, by RFC 7638 thumbprint. */
export interface RecordSigningKey {
  /** base64url SHA-256 JWK thumbprint (RFC 7638): the `keyid` a Web Bot Auth signature names. */
  thumbprint: string;
  kid?: string;
  alg?: string;
  /** The public key itself (its RFC 7638 members), as the service read it; absent from older records. */
  jwk?: Record<string, string>;
}

/** An API (or MCP) passport an agent declares it calls. Context for policy; it grants nothing. */
export interface RecordUsesLink {
  identity_id: string;
  family: string;
  declared_at?: string;
}

export interface RecordState {
  lifecycle: Lifecycle;
  availability?: AvailabilitySignal;
  environment?: string;
  version?: string;
  as_of?: string;
  recheck_required?: boolean;
  duplicate_of?: string;
}

export interface RecordEvidence {
  id?: string;
  claim: string;
  /** `observed` by the service's own check, or `asserted` by a member of the organisation. */
  basis?: "observed" | "asserted" | (string & {});
  /** Set only on asserted evidence a source the operator trusts attested; see `attested_by`. */
  trusted_source?: boolean;
  /** Who attested it: the trusted source and the id of its key. Trust without it does not count. */
  attested_by?: { source: string; key_id: string };
  source?: string;
  scope?: string;
  reference?: string;
  observed_at?: string;
  fresh_until?: string;
}

/** An authority entry in the free-text shape of records before structured authority: readable, never established. */
export interface LegacyAuthority {
  action: string;
  context: string;
  /** Free text the service never checked. */
  granted_by?: string;
  expires_at?: string;
}

/** Who granted a structured authority, as the service checked it when it was written. */
export interface AuthorityGrantor {
  kind: "organisation" | "passport" | (string & {});
  id: string;
  /** The passport's responsible organisation, that organisation's parent, or a passport of the responsible organisation. */
  relationship: "responsible" | "parent" | "passport" | (string & {});
  /** The role the granting member held (organisation kinds). */
  role?: "owner" | "admin" | (string & {});
}

export interface AuthorityScope {
  /** What it applies to, compared exactly or by a trailing `*`. */
  resource?: string;
  limits?: {
    amount?: { value: string; currency: string };
    rate?: { count: number; per: "second" | "minute" | "hour" | "day" | (string & {}) };
  };
}

/** A structured authority grant (docs/record-format.md): an action or pattern, its scope, who granted it and until when. */
export interface StructuredAuthority {
  /** An action name, or a pattern ending in `.*` or `*`. */
  action: string;
  scope?: AuthorityScope;
  granted_by: AuthorityGrantor;
  granted_at: string;
  expires_at: string;
  context?: string;
}

/** Structured entries have `granted_by` as an object; legacy ones a string or nothing. */
export type RecordAuthority = LegacyAuthority | StructuredAuthority;

/** True for a structured grant (its `granted_by` is an object the service checked). */
export function isStructuredAuthority(entry: RecordAuthority): entry is StructuredAuthority {
  return typeof entry.granted_by === "object";
}

/** The members of a published passport record that this package reads. */
export interface PassportRecordView {
  identity_id: string;
  family: string;
  display_name?: string;
  organisation?: RecordOrganisation;
  bindings: RecordBinding[];
  state: RecordState;
  evidence: RecordEvidence[];
  /** Action-specific context only; this package never turns it into permission. */
  authority?: RecordAuthority[];
  /** Agent records: the passports this agent declares it calls. */
  uses?: RecordUsesLink[];
  record_version?: number;
  published_at?: string;
  /** The digest of the previously published version; absent for the first (docs/signing.md). */
  previous_digest?: string;
  digest?: string;
}

export const RECORD_FORMAT = "svc.passport_record";

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

type Shape = Record<string, "string" | "number" | "boolean">;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Copies the listed members that are present; a present member of the wrong type is a problem. */
function pick(
  source: Record<string, unknown>,
  required: Shape,
  optional: Shape,
  at: string,
): Parsed<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(required)) {
    if (typeof source[name] !== type) return { ok: false, problem: `${at}${name} is missing or not a ${type}` };
    out[name] = source[name];
  }
  for (const [name, type] of Object.entries(optional)) {
    const value = source[name];
    if (value === undefined) continue;
    if (typeof value !== type) return { ok: false, problem: `${at}${name} is not a ${type}` };
    out[name] = value;
  }
  return { ok: true, value: out };
}

function list<T>(value: unknown, at: string, item: (entry: unknown, at: string) => Parsed<T>): Parsed<T[]> {
  if (value === undefined) return { ok: true, value: [] };
  if (!Array.isArray(value)) return { ok: false, problem: `${at} is not an array` };
  const out: T[] = [];
  for (const [index, entry] of value.entries()) {
    const parsed = item(entry, `${at}[${index}].`);
    if (!parsed.ok) return parsed;
    out.push(parsed.value);
  }
  return { ok: true, value: out };
}

function member<T>(value: unknown, at: string, required: Shape, optional: Shape): Parsed<T> {
  if (!isObject(value)) return { ok: false, problem: `${at.slice(0, -1)} is not an object` };
  return pick(value, required, optional, at) as Parsed<T>;
}

/**
 * Reads a resolver answer into a {@link PassportRecordView}, or says why it cannot be used.
 * @example
 * const parsed = parseRecord(await response.json());
 * if (parsed.ok) parsed.value.state.lifecycle; // "active"
 */
export function parseRecord(json: unknown): Parsed<PassportRecordView> {
  if (!isObject(json)) return { ok: false, problem: "the answer is not a JSON object" };
  if (json.record_format !== undefined && json.record_format !== RECORD_FORMAT) {
    return { ok: false, problem: `record_format is ${JSON.stringify(json.record_format)}, not ${RECORD_FORMAT}` };
  }
  const top = pick(
    json,
    { identity_id: "string", family: "string" },
    {
      display_name: "string",
      record_version: "number",
      published_at: "string",
      previous_digest: "string",
      digest: "string",
    },
    "",
  );
  if (!top.ok) return top;
  const state = member<RecordState>(
    json.state,
    "state.",
    { lifecycle: "string" },
    {
      availability: "string",
      environment: "string",
      version: "string",
      as_of: "string",
      recheck_required: "boolean",
      duplicate_of: "string",
    },
  );
  if (!state.ok) return state;
  const record = { ...top.value, state: state.value } as unknown as PassportRecordView;

  if (json.organisation !== undefined) {
    const organisation = member<RecordOrganisation>(
      json.organisation,
      "organisation.",
      { id: "string" },
      { name: "string", relationship: "string" },
    );
    if (!organisation.ok) return organisation;
    const parent = (json.organisation as Record<string, unknown>).parent;
    if (parent !== undefined) {
      const parsed = member<{ id: string; name?: string }>(
        parent,
        "organisation.parent.",
        { id: "string" },
        { name: "string" },
      );
      if (!parsed.ok) return parsed;
      organisation.value.parent = parsed.value;
    }
    record.organisation = organisation.value;
  }

  const bindings = list(json.bindings, "bindings", (entry, at) => {
    const binding = member<RecordBinding>(
      entry,
      at,
      { class: "string", value: "string" },
      { label: "string", bound_at: "string", environment: "string", version: "string" },
    );
    if (!binding.ok) return binding;
    const verification = (entry as Record<string, unknown>).verification;
    if (verification === undefined) return binding;
    const parsed = member<BindingVerification>(
      verification,
      `${at}verification.`,
      { state: "string" },
      {
        method: "string",
        verified_at: "string",
        fresh_until: "string",
        evidence: "string",
        lapsed_at: "string",
        reason: "string",
      },
    );
    if (!parsed.ok) return parsed;
    binding.value.verification = parsed.value;
    // Caller keys (signing_keys bindings).
    const keys = (entry as Record<string, unknown>).keys;
    if (keys !== undefined) {
      const read = list(keys, `${at}keys`, (key, keyAt) => {
        const parsed = member<RecordSigningKey>(key, keyAt, { thumbprint: "string" }, { kid: "string", alg: "string" });
        if (!parsed.ok) return parsed;
        const jwk = (key as Record<string, unknown>).jwk;
        if (jwk === undefined) return parsed;
        if (!isObject(jwk) || !Object.values(jwk).every((v) => typeof v === "string")) {
          return { ok: false, problem: `${keyAt}jwk is not a JWK of string members` };
        }
        return { ok: true, value: { ...parsed.value, jwk: jwk as Record<string, string> } };
      });
      if (!read.ok) return read;
      binding.value.keys = read.value;
    }
    const withdrawn = (entry as Record<string, unknown>).withdrawn_keys;
    if (withdrawn !== undefined) {
      const read = list(withdrawn, `${at}withdrawn_keys`, (key, keyAt) =>
        member<RecordWithdrawnKey>(key, keyAt, { thumbprint: "string", withdrawn_at: "string" }, {}),
      );
      if (!read.ok) return read;
      binding.value.withdrawn_keys = read.value;
    }
    const signers = (entry as Record<string, unknown>).card_signed_by;
    if (signers !== undefined) {
      if (!Array.isArray(signers) || !signers.every((s) => typeof s === "string")) {
        return { ok: false, problem: `${at}card_signed_by is not a list of thumbprints` };
      }
      binding.value.card_signed_by = signers as string[];
    }
    return binding;
  });
  if (!bindings.ok) return bindings;
  record.bindings = bindings.value;

  const evidence = list(json.evidence, "evidence", (entry, at) => {
    const parsed = member<RecordEvidence>(
      entry,
      at,
      { claim: "string" },
      {
        id: "string",
        basis: "string",
        trusted_source: "boolean",
        source: "string",
        scope: "string",
        reference: "string",
        observed_at: "string",
        fresh_until: "string",
      },
    );
    const attestedBy = (entry as Record<string, unknown>).attested_by;
    if (!parsed.ok || attestedBy === undefined) return parsed;
    const by = member<NonNullable<RecordEvidence["attested_by"]>>(
      attestedBy,
      `${at}attested_by.`,
      { source: "string", key_id: "string" },
      {},
    );
    if (!by.ok) return by;
    parsed.value.attested_by = by.value;
    return parsed;
  });
  if (!evidence.ok) return evidence;
  record.evidence = evidence.value;

  if (json.authority !== undefined) {
    const authority = list(json.authority, "authority", authorityEntry);
    if (!authority.ok) return authority;
    record.authority = authority.value;
  }
  // Agent uses links.
  if (json.uses !== undefined) {
    const uses = list(json.uses, "uses", (entry, at) =>
      member<RecordUsesLink>(entry, at, { identity_id: "string", family: "string" }, { declared_at: "string" }),
    );
    if (!uses.ok) return uses;
    record.uses = uses.value;
  }
  return { ok: true, value: record };
}

/** One `authority[]` entry: structured when `granted_by` is an object, else the legacy free-text shape. */
function authorityEntry(entry: unknown, at: string): Parsed<RecordAuthority> {
  if (!isObject(entry) || !isObject(entry.granted_by)) {
    return member<LegacyAuthority>(
      entry,
      at,
      { action: "string", context: "string" },
      { granted_by: "string", expires_at: "string" },
    );
  }
  const grant = member<StructuredAuthority>(
    entry,
    at,
    { action: "string", granted_at: "string", expires_at: "string" },
    { context: "string" },
  );
  if (!grant.ok) return grant;
  const by = member<AuthorityGrantor>(
    entry.granted_by,
    `${at}granted_by.`,
    { kind: "string", id: "string", relationship: "string" },
    { role: "string" },
  );
  if (!by.ok) return by;
  grant.value.granted_by = by.value;
  if (entry.scope === undefined) return grant;
  const scope = member<AuthorityScope>(entry.scope, `${at}scope.`, {}, { resource: "string" });
  if (!scope.ok) return scope;
  const limits = (entry.scope as Record<string, unknown>).limits;
  if (limits !== undefined) {
    const parsed = member<NonNullable<AuthorityScope["limits"]>>(limits, `${at}scope.limits.`, {}, {});
    if (!parsed.ok) return parsed;
    const { amount, rate } = limits as Record<string, unknown>;
    if (amount !== undefined) {
      const value = member<{ value: string; currency: string }>(
        amount,
        `${at}scope.limits.amount.`,
        { value: "string", currency: "string" },
        {},
      );
      if (!value.ok) return value;
      parsed.value.amount = value.value;
    }
    if (rate !== undefined) {
      const value = member<{ count: number; per: string }>(
        rate,
        `${at}scope.limits.rate.`,
        { count: "number", per: "string" },
        {},
      );
      if (!value.ok) return value;
      parsed.value.rate = value.value;
    }
    scope.value.limits = parsed.value;
  }
  grant.value.scope = scope.value;
  return grant;
}
