import { type EvidenceRequirement, type Expectation, requireDuration } from "./expectation.ts";
import {
  type ContextMismatch,
  type Finding,
  type NextStep,
  type OrganisationExpectation,
  outcome,
  type ProofSource,
  type ReliedOn,
  type RequiredBinding,
  type StaleItem,
  type VerifyOutcome,
} from "./outcome.ts";
import type { PassportRecordView, RecordBinding, RecordEvidence, RecordState } from "./record.ts";
import { coveredBy, redactUrl, sameBindingValue } from "./url-match.ts";

interface Check {
  relied_on: ReliedOn;
  finding?: Finding;
}

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

function organisation(record: PassportRecordView, wanted: Expectation["organisation"]): Check {
  if (wanted === undefined) return { relied_on: {} };
  const expected: OrganisationExpectation = typeof wanted === "string" ? { id: wanted } : wanted;
  const actual = record.organisation;
  const relied_on: ReliedOn = actual ? { organisation: actual } : {};
  const problems: string[] = [];
  if (expected.id !== undefined && actual?.id !== expected.id) problems.push(`organisation ${expected.id}`);
  if (expected.parent !== undefined && actual?.parent?.id !== expected.parent)
    problems.push(`parent ${expected.parent}`);
  if (expected.relationship !== undefined && actual?.relationship !== expected.relationship) {
    problems.push(`relationship ${expected.relationship}`);
  }
  if (problems.length === 0) return { relied_on };
  const stated = actual
    ? `${actual.id}${actual.parent ? ` (parent ${actual.parent.id})` : ""}${actual.relationship ? `, ${actual.relationship}` : ""}`
    : "no organisation";
  return {
    relied_on,
    finding: {
      outcome: "organisation_mismatch",
      next_step: "challenge",
      reason: `Expected ${problems.join(", ")}; the record states ${stated}.`,
      relied_on,
      expected,
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

function context(record: PassportRecordView, expectation: Expectation): Check {
  const fields = (["environment", "version"] as const).filter((field) => expectation[field] !== undefined);
  const relied_on: ReliedOn = fields.length > 0 ? { state: pick(record.state, [...fields, "as_of"]) } : {};
  const mismatches: ContextMismatch[] = [];
  for (const field of fields) {
    const expected = expectation[field] as string;
    const actual = record.state[field];
    if (actual !== expected) mismatches.push({ field, expected, ...(actual !== undefined ? { actual } : {}) });
  }
  if (mismatches.length === 0) return { relied_on };
  return {
    relied_on,
    finding: {
      outcome: "environment_or_version_mismatch",
      next_step: "deny",
      reason: mismatches
        .map(
          (m) =>
            `${m.field} ${m.actual === undefined ? "is not stated (not established)" : `is ${m.actual}`}, expected ${m.expected}`,
        )
        .join("; "),
      relied_on,
      mismatches,
    },
  };
}

function bindings(record: PassportRecordView, expectation: Expectation): Check {
  const required: (RequiredBinding & { under?: string })[] = [...(expectation.bindings ?? [])];
  if (expectation.baseUrl !== undefined) required.push({ class: "endpoint", under: expectation.baseUrl });
  if (required.length === 0) return { relied_on: {} };
  const matched = new Set<RecordBinding>();
  const missing: RequiredBinding[] = [];
  for (const need of required) {
    const hit = record.bindings.find(
      (b) =>
        b.class === need.class &&
        (need.under !== undefined
          ? coveredBy(need.under, b.value)
          : need.value === undefined || sameBindingValue(b.value, need.value)),
    );
    if (hit) matched.add(hit);
    else
      missing.push({
        class: need.class,
        ...((need.under ?? need.value) ? { value: redactUrl(need.under ?? need.value ?? "") } : {}),
      });
  }
  if (missing.length === 0) return { relied_on: { bindings: [...matched] } };
  const classes = new Set(missing.map((m) => m.class));
  const bound = record.bindings.filter((b) => classes.has(b.class));
  const relied_on: ReliedOn = { bindings: [...new Set([...matched, ...bound])] };
  return {
    relied_on,
    finding: {
      outcome: "binding_mismatch",
      next_step: "deny",
      reason: `The record does not bind ${missing
        .map((m) => (m.value ? `${m.class} ${m.value}` : `any ${m.class}`))
        .join(", ")}${bound.length > 0 ? `; it binds ${bound.map((b) => `${b.class} ${b.value}`).join(", ")}` : ""}.`,
      relied_on,
      missing,
      bound,
    },
  };
}

function ageOf(timestamp: string | undefined, now: number): number | undefined {
  const at = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(at) ? undefined : Math.max(0, (now - at) / 1000);
}

interface EvidenceResult {
  relied_on: ReliedOn;
  missing?: Finding;
  stale: StaleItem[];
}

function evidence(record: PassportRecordView, expectation: Expectation, now: number): EvidenceResult {
  const requirements: EvidenceRequirement[] = (expectation.evidence ?? []).map((r) =>
    typeof r === "string" ? { claim: r } : r,
  );
  const used: RecordEvidence[] = [];
  const missingClaims: string[] = [];
  const stale: StaleItem[] = [];
  for (const requirement of requirements) {
    const maxAge =
      requirement.maxAge === undefined ? undefined : requireDuration(requirement.maxAge, requirement.claim);
    const candidates = record.evidence
      .filter((e) => e.claim === requirement.claim)
      .map((e) => ({
        e,
        age: ageOf(e.observed_at, now),
        expired: e.fresh_until !== undefined && !(Date.parse(e.fresh_until) > now),
      }))
      .sort((a, b) => (a.age ?? Number.POSITIVE_INFINITY) - (b.age ?? Number.POSITIVE_INFINITY));
    if (candidates.length === 0) {
      missingClaims.push(requirement.claim);
      continue;
    }
    const isCurrent = (c: (typeof candidates)[number]) =>
      !c.expired && (maxAge === undefined || (c.age !== undefined && c.age <= maxAge));
    const best = candidates.find(isCurrent) ?? candidates[0];
    if (!best) continue;
    used.push(best.e);
    if (isCurrent(best)) continue;
    stale.push({
      what: "evidence",
      claim: requirement.claim,
      ...(best.e.id ? { evidence_id: best.e.id } : {}),
      ...(best.age !== undefined ? { age_seconds: Math.round(best.age) } : {}),
      ...(maxAge !== undefined ? { max_age_seconds: maxAge } : {}),
      ...(best.expired && best.e.fresh_until ? { fresh_until: best.e.fresh_until } : {}),
    });
  }
  const relied_on: ReliedOn = requirements.length > 0 ? { evidence: used } : {};
  if (missingClaims.length === 0) return { relied_on, stale };
  return {
    relied_on,
    stale,
    missing: {
      outcome: "missing_evidence",
      next_step: "challenge",
      reason: `No evidence supports ${missingClaims.join(", ")}; a required claim without evidence is not established.`,
      relied_on,
      missing_claims: missingClaims,
    },
  };
}

function describeStale(item: StaleItem): string {
  if (item.what === "recheck_required") return "the passport was reactivated or changed and is awaiting a re-check";
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
  expectation: Expectation,
  source: ProofSource,
  now: number,
): VerifyOutcome {
  const maxAge = expectation.maxAge === undefined ? undefined : requireDuration(expectation.maxAge, "maxAge");
  const ev = evidence(record, expectation, now);
  const stale = [...ev.stale];
  if (record.state.recheck_required) stale.push({ what: "recheck_required" });
  if (maxAge !== undefined && source.age_seconds > maxAge) {
    stale.push({ what: "record", age_seconds: Math.round(source.age_seconds), max_age_seconds: maxAge });
  }
  const staleRelied: ReliedOn = record.state.recheck_required ? { state: { recheck_required: true } } : {};
  const checks: Check[] = [
    family(record, expectation.family),
    organisation(record, expectation.organisation),
    state(record, expectation),
    context(record, expectation),
    bindings(record, expectation),
    { relied_on: ev.relied_on, ...(ev.missing ? { finding: ev.missing } : {}) },
  ];
  if (stale.length > 0) {
    const relied_on = merge([ev.relied_on, staleRelied]);
    checks.push({
      relied_on,
      finding: {
        outcome: "stale",
        next_step: stale.every((s) => s.what === "recheck_required") ? "delay" : "re-resolve",
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

function unchecked(expectation: Expectation): string[] {
  const out: string[] = [];
  if (expectation.family === undefined) out.push("family");
  if (expectation.organisation === undefined) out.push("organisation");
  if (expectation.environment === undefined) out.push("environment");
  if (expectation.version === undefined) out.push("version");
  if (expectation.baseUrl === undefined && (expectation.bindings ?? []).length === 0) out.push("bindings");
  if ((expectation.evidence ?? []).length === 0) out.push("evidence");
  if (expectation.maxAge === undefined) out.push("maximum record age");
  return out;
}
