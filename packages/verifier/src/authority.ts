/**
 * Evaluates a policy's required authority against a record's structured authority (docs/policy.md,
 * Authority). Identity never stands in for authority (spec 4.6): only a structured grant, by a
 * grantor the policy accepts, covering the action, resource and amount, and not expired, holds.
 */
import type { GrantRelationship, RequiredAuthority } from "./policy.ts";
import { isStructuredAuthority, type PassportRecordView, type StructuredAuthority } from "./record.ts";

/**
 * How the record's structured authority answers the policy's required authority: `held`;
 * `not_held` (no grant covers the action, resource or amount); `expired`; `not_entitled` (granted
 * by someone the policy does not accept); `not_established` (only legacy free-text entries).
 */
export type AuthorityResult = "held" | "not_held" | "expired" | "not_entitled" | "not_established";

export interface AuthorityCheck {
  result: AuthorityResult;
  /** The action asked for (the policy's `authority.action`, else the action's name). */
  action: string;
  /** The grant relied on (held) or the closest one that failed, by its position in `authority[]`. */
  grant?: number;
  detail: string;
}

const DEFAULT_GRANTORS: readonly GrantRelationship[] = ["responsible", "parent"];
const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/**
 * True when the action `pattern` covers `value`: compared exactly, or by a trailing `*` as a
 * prefix (so `payments.*` covers `payments.refund`, and `*` everything).
 */
function patternCovers(pattern: string, value: string): boolean {
  return pattern === value || (pattern.endsWith("*") && value.startsWith(pattern.slice(0, -1)));
}

/**
 * What can stand for a separator, a dot segment or an escape of either without being one: the
 * backslash, the percent-encoded slash, backslash, dot and percent, and the characters drawn
 * like a slash (fraction, division and mathematical slashes, box-drawing diagonals, the
 * combining solidus overlays). A resource containing any of them covers and is covered by nothing.
 */
const LOOK_ALIKE =
  /[\\\u2044\u2215\u2216\u2571\u2572\u27cb\u27cd\u29f5\u29f8\u29f9\ufe68\uff0f\uff3c]|\u0337|\u0338|%(?:2f|5c|2e|25)/i;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A resource's segments, after Unicode compatibility normalisation (a fullwidth solidus becomes
 * `/`); undefined when it could cross a segment: an empty, `.` or `..` segment, a control
 * character, or anything in {@link LOOK_ALIKE}, before normalisation or after.
 */
function resourceSegments(resource: string): string[] | undefined {
  const normalised = resource.normalize("NFKC");
  // Asked before normalisation too: a fullwidth solidus must not become a separator either.
  if (LOOK_ALIKE.test(resource) || LOOK_ALIKE.test(normalised) || CONTROL.test(normalised)) return undefined;
  const segments = normalised.split("/");
  return segments.every((segment) => segment !== "" && segment !== "." && segment !== "..") ? segments : undefined;
}

/**
 * True when the grant's resource `pattern` covers `resource`, segment by segment: each segment
 * equal, except that a last pattern segment ending in `*` covers the segments that start with
 * what precedes it and everything below them (`org:demo/customers/*` covers
 * `org:demo/customers/c1/notes`, never `org:demo/customers/../../org:victim/x`; `*` covers every
 * resource that can be read).
 */
export function resourceCovers(pattern: string, resource: string): boolean {
  const wanted = resourceSegments(resource);
  const granted = resourceSegments(pattern);
  if (!wanted || !granted) return false;
  const last = granted.length - 1;
  for (const [index, segment] of granted.entries()) {
    const asked = wanted[index];
    if (asked === undefined) return false;
    if (index === last && segment.endsWith("*")) return asked.startsWith(segment.slice(0, -1));
    if (asked !== segment) return false;
  }
  return wanted.length === granted.length;
}

/** Compares two non-negative decimals written as text; undefined when either is not one. */
function compareDecimal(a: string, b: string): number | undefined {
  const x = DECIMAL.exec(a);
  const y = DECIMAL.exec(b);
  if (!x || !y) return undefined;
  const digits = Math.max(x[2]?.length ?? 0, y[2]?.length ?? 0);
  const scaled = (m: RegExpExecArray) => BigInt(`${m[1]}${(m[2] ?? "").padEnd(digits, "0")}`);
  const d = scaled(x) - scaled(y);
  return d === 0n ? 0 : d > 0n ? 1 : -1;
}

/** Why a grant that covers the action does not hold, or undefined when it holds. */
function grantProblem(
  grant: StructuredAuthority,
  asked: {
    record: PassportRecordView;
    entitled: readonly GrantRelationship[];
    resource: string | undefined;
    amount: { value: string; currency: string } | undefined;
    now: number;
  },
): { result: "not_held" | "expired" | "not_entitled" | "not_established"; detail: string } | undefined {
  const { record, entitled, resource, amount, now } = asked;
  const by = grant.granted_by;
  const organisation = record.organisation;
  const matchesRelationship =
    (by.relationship === "responsible" && by.kind === "organisation" && by.id === organisation?.id) ||
    (by.relationship === "parent" && by.kind === "organisation" && by.id === organisation?.parent?.id) ||
    (by.relationship === "passport" && by.kind === "passport");
  if (!entitled.includes(by.relationship as GrantRelationship)) {
    return {
      result: "not_entitled",
      detail: `granted by ${by.kind} ${by.id} (${by.relationship}), which the policy does not accept`,
    };
  }
  if (!matchesRelationship) {
    return {
      result: "not_entitled",
      detail: `granted by ${by.kind} ${by.id} as ${by.relationship}, which is not this passport's ${by.relationship === "parent" ? "parent organisation" : "responsible organisation"}`,
    };
  }
  if (by.kind === "organisation" && by.role !== undefined && by.role !== "owner" && by.role !== "admin") {
    return { result: "not_entitled", detail: `granted by a member with role ${by.role}` };
  }
  if (
    resource !== undefined &&
    grant.scope?.resource !== undefined &&
    !resourceCovers(grant.scope.resource, resource)
  ) {
    return { result: "not_held", detail: `the grant covers ${grant.scope.resource}, not ${resource}` };
  }
  if (resource === undefined && grant.scope?.resource !== undefined) {
    // A grant limited to a resource says nothing of a call that names none.
    return {
      result: "not_established",
      detail: `the grant covers ${grant.scope.resource} only, and no resource was given`,
    };
  }
  const limit = grant.scope?.limits?.amount;
  if (amount === undefined && limit) {
    // A limited grant says nothing of a call whose amount is not known.
    return {
      result: "not_established",
      detail: `the grant is limited to ${limit.value} ${limit.currency}, and no amount was given`,
    };
  }
  if (amount !== undefined) {
    if (!limit) return { result: "not_held", detail: "the grant states no amount limit, so it covers no amount" };
    if (limit.currency !== amount.currency) {
      return { result: "not_held", detail: `the grant's limit is in ${limit.currency}, not ${amount.currency}` };
    }
    const order = compareDecimal(amount.value, limit.value);
    if (order === undefined) return { result: "not_held", detail: `the grant's limit ${limit.value} is not a decimal` };
    if (order > 0) {
      return {
        result: "not_held",
        detail: `${amount.value} ${amount.currency} exceeds the limit of ${limit.value} ${limit.currency}`,
      };
    }
  }
  const granted = Date.parse(grant.granted_at);
  if (!(granted <= now)) return { result: "not_held", detail: `granted for ${grant.granted_at}, not yet in force` };
  const expires = Date.parse(grant.expires_at);
  if (!(expires > now)) return { result: "expired", detail: `expired at ${grant.expires_at}` };
  return undefined;
}

const RANK = { not_entitled: 4, expired: 3, not_established: 2, not_held: 1 } as const;

/**
 * The required authority for `action` against the record's `authority[]` at `now`. The call's own
 * `amount` and `resource` take precedence over the policy's.
 * @example
 * evaluateAuthority(record, { granted_by: ["responsible"] }, "payments.refund", { amount: { value: "50.00", currency: "EUR" } }, Date.now());
 * // { result: "held", action: "payments.refund", grant: 0, detail: "..." }
 */
export function evaluateAuthority(
  record: PassportRecordView,
  required: RequiredAuthority,
  actionName: string,
  call: { amount?: { value: string; currency: string }; resource?: string },
  now: number,
): AuthorityCheck {
  const action = required.action ?? actionName;
  const entitled = required.granted_by ?? DEFAULT_GRANTORS;
  const resource = call.resource ?? required.resource;
  const amount = call.amount ?? required.amount;
  const entries = record.authority ?? [];
  let closest: AuthorityCheck | undefined;
  let closestRank = 0;
  let legacy: number | undefined;
  for (const [index, entry] of entries.entries()) {
    if (!patternCovers(entry.action, action)) continue;
    if (!isStructuredAuthority(entry)) {
      legacy ??= index;
      continue;
    }
    const problem = grantProblem(entry, { record, entitled, resource, amount, now });
    if (!problem) {
      return {
        result: "held",
        action,
        grant: index,
        detail: `granted for ${entry.action} by ${entry.granted_by.kind} ${entry.granted_by.id} until ${entry.expires_at}`,
      };
    }
    if (RANK[problem.result] > closestRank) {
      closestRank = RANK[problem.result];
      closest = { result: problem.result, action, grant: index, detail: problem.detail };
    }
  }
  // A structured grant that came close says more than a legacy entry; a legacy entry more than nothing.
  if (closest && closest.result !== "not_held") return closest;
  if (legacy !== undefined && !closest) {
    return {
      result: "not_established",
      action,
      grant: legacy,
      detail: "only a free-text authority entry names this action; it was never checked, so it establishes nothing",
    };
  }
  return closest ?? { result: "not_held", action, detail: `no authority entry covers ${action}` };
}
