import { type NextStep, versionSatisfies } from "@passport/protocol";
import { bindings } from "./checks/bindings.ts";
import type { Check } from "./checks/check.ts";
import { evidence } from "./checks/evidence.ts";
import { type DecisionExpectation, type Expectation, requireDuration } from "./expectation.ts";
import {
  type ContextMismatch,
  type OrganisationExpectation,
  outcome,
  type ProofSource,
  type ReliedOn,
  type StaleItem,
  type VerifyOutcome,
} from "./outcome.ts";
import type { PassportRecordView, RecordBinding, RecordOrganisation, RecordState } from "./record.ts";
import { redactUrl } from "./url-match.ts";

function family(record: PassportRecordView, expected: string | undefined): Check {
  const relied_on = { family: record.family };
  if (expected === undefined || record.family === expected) return { relied_on };
  return {
    relied_on,
    finding: {
      outcome: "family_mismatch",
      next_step: "deny",
      reason: `The record is an ${record.family} passport, not the ${expected} passport expected.`,
      relied_on,
      expected,
      actual: record.family,
    },
  };
}

/** What an organisation expectation finds wrong with the record's organisation (empty: it matches). */
function organisationProblems(actual: RecordOrganisation | undefined, expected: OrganisationExpectation): string[] {
  const problems: string[] = [];
  if (expected.id !== undefined && actual?.id !== expected.id) problems.push(`organisation ${expected.id}`);
  if (expected.parent !== undefined && actual?.parent?.id !== expected.parent)
    problems.push(`parent ${expected.parent}`);
  if (expected.relationship !== undefined && actual?.relationship !== expected.relationship) {
    problems.push(`relationship ${expected.relationship}`);
  }
  return problems;
}

function organisation(record: PassportRecordView, expectation: DecisionExpectation): Check {
  const wanted = expectation.policy?.organisations ?? (expectation.organisation ? [expectation.organisation] : []);
  if (wanted.length === 0) return { relied_on: {} };
  const accepted: OrganisationExpectation[] = wanted.map((w) => (typeof w === "string" ? { id: w } : w));
  const actual = record.organisation;
  const relied_on: ReliedOn = actual ? { organisation: actual } : {};
  // Any one of them (a policy may accept several).
  const each = accepted.map((expected) => organisationProblems(actual, expected));
  if (each.some((problems) => problems.length === 0)) return { relied_on };
  const expected = accepted[0] as OrganisationExpectation;
  const problems = each.length === 1 ? (each[0] as string[]) : each.map((p) => p.join(" and "));
  const stated = actual
    ? `${actual.id}${actual.parent ? ` (parent ${actual.parent.id})` : ""}${actual.relationship ? `, ${actual.relationship}` : ""}`
    : "no organisation";
  return {
    relied_on,
    finding: {
      outcome: "organisation_mismatch",
      next_step: "challenge",
      reason: `Expected ${problems.join(each.length === 1 ? ", " : " or ")}; the record states ${stated}.`,
      relied_on,
      expected,
      ...(accepted.length > 1 ? { accepted } : {}),
      ...(actual ? { actual } : {}),
    },
  };
}

const LIFECYCLE_STEP: Record<string, NextStep> = { suspended: "delay", revoked: "deny", retired: "deny" };

function state(record: PassportRecordView, expectation: Expectation): Check {
  const s = record.state;
  const relied_on: ReliedOn = {
    state: pick(s, ["lifecycle", "availability", "as_of", "duplicate_of"]),
  };
  const lifecycles = [expectation.lifecycle ?? "active"].flat();
  const problems: string[] = [];
  const steps: NextStep[] = [];
  if (!lifecycles.includes(s.lifecycle)) {
    problems.push(`lifecycle is ${s.lifecycle} (accepted: ${lifecycles.join(", ")})`);
    steps.push(LIFECYCLE_STEP[s.lifecycle] ?? "deny");
  }
  if (expectation.availability) {
    if (s.availability === undefined || !expectation.availability.includes(s.availability)) {
      problems.push(
        `availability is ${s.availability ?? "not stated"} (accepted: ${expectation.availability.join(", ")})`,
      );
      steps.push("delay");
    }
  } else if (s.availability === "degraded" || s.availability === "unavailable") {
    problems.push(`availability is ${s.availability}`);
    steps.push("delay");
  }
  if (s.duplicate_of !== undefined) {
    // Spec 1.6: both records must not be operated as equivalent; never switch to the other id.
    problems.push(`marked as a duplicate of ${s.duplicate_of}`);
    steps.push("challenge");
  }
  if (problems.length === 0) return { relied_on };
  const severity: NextStep[] = ["deny", "challenge", "delay"];
  const next_step = severity.find((step) => steps.includes(step)) ?? "deny";
  return {
    relied_on,
    finding: {
      outcome: "state_not_operative",
      next_step,
      reason: `The passport is not operative: ${problems.join("; ")}.`,
      relied_on,
      state: s,
      problems,
    },
  };
}

/**
 * Environment and version: each required field is compared with the context of the bindings the
 * target matched when they state it (a staging endpoint under a production passport is staging),
 * else with the passport's state. A policy may accept several environments and a version range.
 */
function context(record: PassportRecordView, expectation: DecisionExpectation, matched: RecordBinding[]): Check {
  const environments =
    expectation.policy?.environments ?? (expectation.environment !== undefined ? [expectation.environment] : undefined);
  const versions = expectation.policy?.versions ?? expectation.version;
  const wanted = { environment: environments, version: versions };
  const fields = (["environment", "version"] as const).filter((field) => wanted[field] !== undefined);
  const accepts = (field: "environment" | "version", actual: string | undefined): boolean =>
    actual !== undefined &&
    (field === "environment"
      ? (environments ?? []).includes(actual)
      : expectation.policy?.versions !== undefined
        ? versionSatisfies(actual, expectation.policy.versions)
        : actual === expectation.version);
  const mismatches: ContextMismatch[] = [];
  const statedBy: RecordBinding[] = [];
  const fromState: ("environment" | "version")[] = [];
  for (const field of fields) {
    const expected = field === "environment" ? (environments ?? []).join(" or ") : (versions as string);
    const own = matched.filter((b) => b[field] !== undefined);
    if (own.length > 0) {
      statedBy.push(...own);
      const wrong = own.find((b) => !accepts(field, b[field]));
      if (wrong) {
        mismatches.push({
          field,
          expected,
          actual: wrong[field] as string,
          binding: { class: wrong.class, value: redactUrl(wrong.value) },
        });
      }
      continue;
    }
    fromState.push(field);
    const actual = record.state[field];
    if (!accepts(field, actual)) mismatches.push({ field, expected, ...(actual !== undefined ? { actual } : {}) });
  }
  const relied_on: ReliedOn = {
    ...(fromState.length > 0 ? { state: pick(record.state, [...fromState, "as_of"]) } : {}),
    ...(statedBy.length > 0 ? { bindings: [...new Set(statedBy)] } : {}),
  };
  if (mismatches.length === 0) return { relied_on };
  return {
    relied_on,
    finding: {
      outcome: "environment_or_version_mismatch",
      next_step: "deny",
      reason: mismatches
        .map(
          (m) =>
            `${m.binding ? `the ${m.binding.class} ${m.binding.value} states ` : ""}${m.field} ${m.actual === undefined ? "is not stated (not established)" : `is ${m.actual}`}, expected ${m.expected}`,
        )
        .join("; "),
      relied_on,
      mismatches,
    },
  };
}

const CURRENT_PROOF: Record<string, string> = {
  unavailable: "no status token could be had to show the record is current",
  record_superseded: "the status token states a newer record than the one relied on",
  record_mismatch: "the status token states another record than the one relied on",
  publication_pending: "a newer committed version is still being published",
};

function describeStale(item: StaleItem): string {
  if (item.what === "recheck_required") return "the passport was reactivated or changed and is awaiting a re-check";
  if (item.what === "propagation") return `the ${item.lagging ?? "proof"} has not caught up with a publication yet`;
  if (item.what === "status") {
    const problem = item.problem ?? "unavailable";
    const why = CURRENT_PROOF[problem] ?? `the status token is not usable (${problem})`;
    return item.detail ? `${why}: ${item.detail}` : why;
  }
  const age = item.age_seconds === undefined ? "of unknown age" : `${formatAge(item.age_seconds)} old`;
  const limit = item.max_age_seconds === undefined ? "" : ` (maximum ${formatAge(item.max_age_seconds)})`;
  if (item.what === "record") return `the copy of the record is ${age}${limit}`;
  const expired = item.fresh_until ? `, fresh only until ${item.fresh_until}` : "";
  return `evidence for ${item.claim} is ${age}${limit}${expired}`;
}

/**
 * Seconds as a short human duration.
 * @example
 * formatAge(5400); // "1.5h"
 */
export function formatAge(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)}s`;
  if (seconds < 7200) return `${Math.round(seconds / 6) / 10}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 360) / 10}h`;
  return `${Math.round(seconds / 8640) / 10}d`;
}

function pick<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key];
  return out;
}

function merge(checks: ReliedOn[]): ReliedOn {
  const out: ReliedOn = {};
  let state: Partial<RecordState> | undefined;
  for (const relied of checks) {
    const { state: s, ...rest } = relied;
    Object.assign(out, rest);
    if (s) state = { ...state, ...s };
  }
  return state ? { ...out, state } : out;
}

/**
 * Applies an expectation to a resolved record. Pure: the caller supplies the record, where it
 * came from and the time. Every check runs; the outcome is the first failure in precedence order
 * (object, responsibility, state, context, bindings, evidence, freshness) and `findings` lists all.
 * @example
 * const result = evaluate(record, { family: "api", environment: "production" }, source, Date.now());
 * result.outcome; // "ok" | "family_mismatch" | ...
 */
export function evaluate(
  record: PassportRecordView,
  expectation: DecisionExpectation,
  source: ProofSource,
  now: number,
  current?: StaleItem,
): VerifyOutcome {
  const maxAge = expectation.maxAge === undefined ? undefined : requireDuration(expectation.maxAge, "maxAge");
  const ev = evidence(record, expectation, now);
  const stale = [...ev.stale];
  // At higher consequence: the status token did not establish this record as current.
  if (current) stale.push(current);
  if (record.state.recheck_required) stale.push({ what: "recheck_required" });
  if (maxAge !== undefined && source.age_seconds > maxAge) {
    stale.push({ what: "record", age_seconds: Math.round(source.age_seconds), max_age_seconds: maxAge });
  }
  const staleRelied: ReliedOn = record.state.recheck_required ? { state: { recheck_required: true } } : {};
  const bound = bindings(record, expectation, now);
  const checks: Check[] = [
    family(record, expectation.family),
    organisation(record, expectation),
    state(record, expectation),
    context(record, expectation, bound.matched),
    ...bound.checks,
    { relied_on: ev.relied_on, ...(ev.missing ? { finding: ev.missing } : {}) },
  ];
  if (stale.length > 0) {
    const relied_on = merge([ev.relied_on, staleRelied]);
    checks.push({
      relied_on,
      finding: {
        outcome: "stale",
        next_step: stale.every((s) => s.what === "recheck_required" || s.problem === "publication_pending")
          ? "delay"
          : "re-resolve",
        reason: `The proof is too old for this decision: ${stale.map(describeStale).join("; ")}.`,
        relied_on,
        stale,
      },
    });
  }
  const findings = checks.flatMap((c) => (c.finding ? [c.finding] : []));
  const [first] = findings;
  if (first) {
    return outcome({ ...first, identity_id: record.identity_id, source, findings } as Parameters<typeof outcome>[0]);
  }
  const relied_on = merge([
    { identity_id: record.identity_id },
    ...checks.map((c) => c.relied_on),
    pick(record, ["record_version", "published_at", "digest"]),
  ]);
  return outcome({
    outcome: "ok",
    identity_id: record.identity_id,
    next_step: "proceed",
    reason:
      "The passport matches every stated expectation. Authenticate to the API and evaluate the action's authority separately.",
    relied_on,
    source,
    unchecked: unchecked(expectation),
  });
}

function unchecked(expectation: DecisionExpectation): string[] {
  const out: string[] = [];
  const policy = expectation.policy ?? {};
  if (expectation.family === undefined) out.push("family");
  if (expectation.organisation === undefined && policy.organisations === undefined) out.push("organisation");
  if (expectation.environment === undefined && policy.environments === undefined) out.push("environment");
  if (expectation.version === undefined && policy.versions === undefined) out.push("version");
  if (expectation.baseUrl === undefined && (expectation.bindings ?? []).length === 0) out.push("bindings");
  if ((expectation.evidence ?? []).length === 0) out.push("evidence");
  if (expectation.maxAge === undefined) out.push("maximum record age");
  return out;
}
