/**
 * The consumer's policy document (docs/policy.md): per action, what the passport must show and
 * how each outcome class maps to a decision. The zod `PassportPolicy` in the service's domain
 * package is the one source of truth and its JSON Schema is published; this is a hand-written
 * reader of the same shape so the package keeps no runtime dependencies (a property test keeps
 * both in agreement).
 */

import {
  AUTHORITY_OUTCOMES,
  type AuthorityOutcome,
  canonicalJson,
  DECISIONS,
  type Decision,
  digestOfCanonical,
  type NextStep,
  OUTCOME_CLASSES,
  POLICY_FORMAT,
  POLICY_LIMITS,
  POLICY_VERSION,
  type PolicyOutcome,
  strictJsonParse,
  validVersions,
} from "@passport/protocol";
import type { Consequence } from "./expectation.ts";
import { type Duration, durationSeconds } from "./expectation.ts";
import type { OrganisationExpectation, RequiredBinding } from "./outcome.ts";
import type { AvailabilitySignal, Lifecycle } from "./record.ts";

/** Who may grant an authority, relative to the passport (CONTRACT 1b): its responsible organisation, that organisation's parent, or a passport of the responsible organisation. */
export type GrantRelationship = "responsible" | "parent" | "passport";
const GRANT_RELATIONSHIPS: readonly GrantRelationship[] = ["responsible", "parent", "passport"];

export interface RequiredAuthority {
  /** The action the grant must cover; default: the policy action's name. */
  action?: string;
  /** The resource the grant must cover (the call's `resource` takes precedence). */
  resource?: string;
  /** The amount the grant's limit must cover, same currency (the call's `amount` takes precedence). */
  amount?: { value: string; currency: string };
  /** Who is entitled to grant it; default `["responsible", "parent"]`. */
  granted_by?: GrantRelationship[];
}

/** Reciprocal trust (issue 28): the calling agent's side. Read and checked here; evaluated by `decideCall`. */
export interface CallerPolicy {
  required: boolean;
  family?: "agent" | "api";
  organisations?: (string | OrganisationExpectation)[];
  uses_link?: boolean;
  authority?: RequiredAuthority;
  consequence?: Consequence;
  signature_window?: Duration;
}

export interface ClaimRequirement {
  claim: string;
  max_age?: Duration;
}

export interface ActionPolicy {
  /** Spec 4.1 freshness; default `lower`. */
  consequence?: Consequence;
  family?: "api" | "agent";
  /** Any one of them. */
  organisations?: (string | OrganisationExpectation)[];
  /** Any one of them: checked against the matched binding's `environment`, else the passport's state. */
  environments?: string[];
  /** A semantic-version range (`^2.1.0`, `>=2 <3`, `2.x`); a string without range syntax is one exact version. */
  versions?: string;
  bindings?: RequiredBinding[];
  claims?: ClaimRequirement[];
  authority?: RequiredAuthority;
  lifecycle?: Lifecycle[];
  availability?: AvailabilitySignal[];
  /** `higher` only: the oldest status token accepted. */
  status_max_age?: Duration;
  /** Decision per outcome class; an outcome not listed gets today's next step (`proceed` -> `allow`). */
  outcomes?: Partial<Record<PolicyOutcome, Decision>>;
  caller?: CallerPolicy;
}

export interface PolicyDocument {
  policy_format: typeof POLICY_FORMAT;
  version: typeof POLICY_VERSION;
  /** Merged under every action: an action's own member replaces the default's; `outcomes` merge per key. */
  defaults?: ActionPolicy;
  actions: Record<string, ActionPolicy>;
}

/** An invalid policy: `path` is the JSON pointer (RFC 6901) of the first problem, e.g. `/actions/refund/consequence`. */
export class PolicyError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`policy ${path || "/"}: ${message}`);
    this.name = "PolicyError";
    this.path = path;
  }
}

/** The default decision for each outcome: today's next step, with `proceed` as `allow`. */
export function defaultDecision(nextStep: NextStep): Decision {
  return nextStep === "proceed" ? "allow" : nextStep;
}

/** Authority failures deny unless the policy says otherwise: identity never stands in for authority. */
export const DEFAULT_AUTHORITY_DECISION: Record<AuthorityOutcome, Decision> = {
  authority_not_held: "deny",
  authority_expired: "deny",
  authority_not_entitled: "deny",
};

const AMOUNT_VALUE = /^(0|[1-9]\d{0,17})(\.\d{1,8})?$/;
const CURRENCY = /^[A-Z]{3}$/;

const ACTION_MEMBERS = [
  "consequence",
  "family",
  "organisations",
  "environments",
  "versions",
  "bindings",
  "claims",
  "authority",
  "lifecycle",
  "availability",
  "status_max_age",
  "outcomes",
  "caller",
] as const;
const POLICY_OUTCOMES: readonly string[] = [...OUTCOME_CLASSES, ...AUTHORITY_OUTCOMES];

const pointerName = (name: string) => name.replace(/~/g, "~0").replace(/\//g, "~1");

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

type Check = (value: unknown, at: string) => void;

function fail(at: string, message: string): never {
  throw new PolicyError(at, message);
}

function object(value: unknown, at: string, members: Record<string, Check>, required: string[] = []): void {
  if (!isObject(value)) fail(at, "must be an object");
  for (const name of required) if (!(name in value)) fail(`${at}/${pointerName(name)}`, "is required");
  for (const [name, member] of Object.entries(value)) {
    const check = Object.hasOwn(members, name) ? members[name] : undefined;
    if (!check) fail(`${at}/${pointerName(name)}`, "is not a member this policy format knows");
    check(member, `${at}/${pointerName(name)}`);
  }
}

const text =
  (max: number = POLICY_LIMITS.name): Check =>
  (value, at) => {
    if (typeof value !== "string" || value.length === 0) fail(at, "must be a non-empty string");
    if (value.length > max) fail(at, `must be at most ${max} characters`);
  };

const oneOf =
  (allowed: readonly string[]): Check =>
  (value, at) => {
    if (typeof value !== "string" || !allowed.includes(value)) fail(at, `must be one of ${allowed.join(", ")}`);
  };

const list =
  (item: Check, min = 1): Check =>
  (value, at) => {
    if (!Array.isArray(value)) fail(at, "must be an array");
    if (value.length < min) fail(at, `must list at least ${min}`);
    if (value.length > POLICY_LIMITS.list) fail(at, `must list at most ${POLICY_LIMITS.list}`);
    for (const [index, entry] of value.entries()) item(entry, `${at}/${index}`);
  };

const duration: Check = (value, at) => {
  const ok =
    (typeof value === "number" && Number.isFinite(value) && value >= 0) ||
    (typeof value === "string" && /^\d+(\.\d+)?[smhd]?$/.test(value) && durationSeconds(value) !== undefined);
  if (!ok) fail(at, "must be a duration: seconds, or e.g. 90s, 15m, 12h, 30d");
};

const boolean: Check = (value, at) => {
  if (typeof value !== "boolean") fail(at, "must be true or false");
};

const organisation: Check = (value, at) => {
  if (typeof value === "string") return text()(value, at);
  object(value, at, { id: text(), parent: text(), relationship: oneOf(["responsible", "operator"]) });
};

const amount: Check = (value, at) =>
  object(
    value,
    at,
    {
      value: (v, a) => {
        if (typeof v !== "string" || !AMOUNT_VALUE.test(v)) fail(a, 'must be a decimal amount such as "100.00"');
      },
      currency: (v, a) => {
        if (typeof v !== "string" || !CURRENCY.test(v)) fail(a, "must be an ISO 4217 code of three capital letters");
      },
    },
    ["value", "currency"],
  );

const authority: Check = (value, at) =>
  object(value, at, {
    action: text(),
    resource: text(POLICY_LIMITS.text),
    amount,
    granted_by: list(oneOf(GRANT_RELATIONSHIPS)),
  });

const caller: Check = (value, at) =>
  object(
    value,
    at,
    {
      required: boolean,
      family: oneOf(["agent", "api"]),
      organisations: list(organisation),
      uses_link: boolean,
      authority,
      consequence: oneOf(["lower", "changing", "higher"]),
      signature_window: duration,
    },
    ["required"],
  );

const actionPolicy: Check = (value, at) =>
  object(value, at, {
    consequence: oneOf(["lower", "changing", "higher"]),
    family: oneOf(["api", "agent"]),
    organisations: list(organisation),
    environments: list(text()),
    versions: (v, a) => {
      text()(v, a);
      if (!validVersions(v as string))
        fail(a, 'must be a version range such as "^2.1.0", ">=2 <3" or "2.x", or one exact version');
    },
    bindings: list((v, a) => object(v, a, { class: text(), value: text(POLICY_LIMITS.text) }, ["class"])),
    claims: list((v, a) => object(v, a, { claim: text(), max_age: duration }, ["claim"])),
    authority,
    lifecycle: list(text()),
    availability: list(text()),
    status_max_age: duration,
    outcomes: (v, a) => {
      if (!isObject(v)) fail(a, "must be an object");
      for (const [name, decision] of Object.entries(v)) {
        const where = `${a}/${pointerName(name)}`;
        if (!POLICY_OUTCOMES.includes(name)) fail(where, "is not an outcome class");
        oneOf(DECISIONS)(decision, where);
      }
    },
    caller,
  } satisfies Record<(typeof ACTION_MEMBERS)[number], Check>);

/**
 * Reads and checks a policy document (its JSON text, or the parsed value). Refuses anything the
 * published schema refuses, unknown members included (a misspelt member would otherwise be
 * silently ignored), with a {@link PolicyError} naming the JSON pointer of the first problem.
 * @example
 * const policy = loadPolicy(await readFile("policy.json", "utf8"));
 * // throws PolicyError { path: "/actions/refund/consequence" } for "consequence": "highest"
 */
export function loadPolicy(input: unknown): PolicyDocument {
  // The copy is what is checked and returned (frozen below): the policy decided under is the one
  // checked, whatever the caller does with its own object afterwards.
  let value: unknown;
  if (typeof input === "string") {
    const parsed = strictJsonParse(input);
    if (!parsed.ok) throw new PolicyError("", parsed.kind === "not_json" ? "is not JSON" : parsed.problem);
    value = parsed.value;
  } else {
    try {
      value = structuredClone(input);
    } catch {
      throw new PolicyError("", "is not a JSON value");
    }
  }
  object(
    value,
    "",
    {
      policy_format: (v, a) => {
        if (v !== POLICY_FORMAT) fail(a, `must be "${POLICY_FORMAT}"`);
      },
      version: (v, a) => {
        if (v !== POLICY_VERSION) fail(a, `must be ${POLICY_VERSION}`);
      },
      defaults: actionPolicy,
      actions: (v, a) => {
        if (!isObject(v)) fail(a, "must be an object");
        const names = Object.keys(v);
        if (names.length > POLICY_LIMITS.actions) fail(a, `must name at most ${POLICY_LIMITS.actions} actions`);
        for (const name of names) {
          const where = `${a}/${pointerName(name)}`;
          if (name.length === 0 || name.length > POLICY_LIMITS.name) {
            fail(where, `an action's name must be 1 to ${POLICY_LIMITS.name} characters`);
          }
          actionPolicy(v[name], where);
        }
      },
    },
    ["policy_format", "version", "actions"],
  );
  // Frozen, so its digest can be kept by identity (policyDigest).
  const loaded = deepFreeze(value) as PolicyDocument;
  loadedPolicies.add(loaded);
  return loaded;
}

/** Policies returned by loadPolicy: checked, and frozen all the way down. */
const loadedPolicies = new WeakSet<PolicyDocument>();

function deepFreeze(value: unknown): unknown {
  if (value !== null && typeof value === "object") {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/**
 * The policy's digest for receipts: `sha-256:` and the base64url SHA-256 of its RFC 8785
 * canonical JSON, so the same policy written with other spacing or member order has one digest.
 */
export async function policyDigest(policy: PolicyDocument): Promise<string> {
  // One policy object serves many decisions. One from loadPolicy cannot change, so its digest is
  // kept by identity (about 3 microseconds per decision: the canonical form is not rebuilt); any
  // other object's digest is kept while its canonical form is unchanged (half the cost of hashing).
  const known = digests.get(policy);
  if (known && loadedPolicies.has(policy)) return known.digest;
  const text = canonicalJson(policy);
  if (known?.text === text) return known.digest;
  const digest = digestOfCanonical(text);
  digests.set(policy, { text, digest });
  return digest;
}

const digests = new WeakMap<PolicyDocument, { text: string; digest: string }>();

/**
 * The policy for `action`: its own members over `defaults` (`outcomes` merged per outcome).
 * An action the policy does not name is refused: a misspelt action must not fall back to defaults.
 */
export function actionPolicyFor(policy: PolicyDocument, action: string): ActionPolicy {
  const own = Object.hasOwn(policy.actions, action) ? policy.actions[action] : undefined;
  if (!own) throw new PolicyError(`/actions/${pointerName(action)}`, `names no action "${action}"`);
  const defaults = policy.defaults ?? {};
  const outcomes = { ...defaults.outcomes, ...own.outcomes };
  return { ...defaults, ...own, ...(Object.keys(outcomes).length > 0 ? { outcomes } : {}) };
}
