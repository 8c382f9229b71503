import { type NextStep, versionSatisfies } from "@passport/protocol";
import {
  type DecisionExpectation,
  type EvidenceRequirement,
  type Expectation,
  requireDuration,
} from "./expectation.ts";
import {
  type ContextMismatch,
  type Finding,
  type OrganisationExpectation,
  outcome,
  type ProofSource,
  type ReliedOn,
  type RequiredBinding,
  type StaleItem,
  type UncountedEvidence,
  type UnverifiedBinding,
  type VerifyOutcome,
} from "./outcome.ts";
import type { PassportRecordView, RecordBinding, RecordEvidence, RecordOrganisation, RecordState } from "./record.ts";
import { coveredBy, isAddressScope, redactUrl, sameBindingValue, scopeCovers } from "./url-match.ts";

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

function isPast(timestamp: string | undefined, now: number): boolean {
  return !(timestamp !== undefined && Date.parse(timestamp) > now);
}

/**
 * Why a binding does not count as proven at `now`, or undefined when it does: it must be
 * `verified`, within its `fresh_until`, and name an observed evidence item, itself current, whose
 * scope covers the bound value (URL values; other values are proven by a provider's statement).
 */
function unproven(binding: RecordBinding, record: PassportRecordView, now: number): UnverifiedBinding | undefined {
  const v = binding.verification;
  const base = { class: binding.class, value: binding.value };
  if (!v) return { ...base, state: "claimed", problem: "the record publishes no verification for it (claimed)" };
  const facts = {
    ...(v.method ? { method: v.method } : {}),
    ...(v.fresh_until ? { fresh_until: v.fresh_until } : {}),
    ...(v.lapsed_at ? { lapsed_at: v.lapsed_at } : {}),
  };
  if (v.state === "lapsed") {
    return { ...base, ...facts, state: "lapsed", problem: `its proof lapsed${v.reason ? `: ${v.reason}` : ""}` };
  }
  if (v.state !== "verified") return { ...base, ...facts, state: v.state, problem: "control of it is not proven" };
  if (isPast(v.fresh_until, now)) {
    return {
      ...base,
      ...facts,
      state: "lapsed",
      problem: `its verification was fresh only until ${v.fresh_until ?? "(not stated)"}`,
    };
  }
  const proof = record.evidence.find((e) => e.id !== undefined && e.id === v.evidence);
  const unsupported = (problem: string) => ({ ...base, ...facts, state: v.state, problem });
  if (!proof) return unsupported(`the evidence it names (${v.evidence ?? "none"}) is not in the record`);
  if (proof.basis !== "observed") return unsupported(`its evidence ${proof.id} was not observed by the service`);
  if (isPast(proof.fresh_until, now)) {
    return {
      ...base,
      ...facts,
      state: "lapsed",
      problem: `its evidence ${proof.id} was fresh only until ${proof.fresh_until ?? "(not stated)"}`,
    };
  }
  if (isUrl(binding.value) && (proof.scope === undefined || !scopeCovers(proof.scope, binding.value))) {
    return unsupported(
      `its evidence ${proof.id} was observed for ${proof.scope ?? "no stated scope"}, not for the bound value`,
    );
  }
  return undefined;
}

function isUrl(value: string): boolean {
  return /^https?:\/\//i.test(value) && URL.canParse(value);
}

/**
 * The target must be bound, and bound with proof: a binding that only matches (claimed, lapsed,
 * or verified without current observed evidence) is `binding_unverified`, never a match.
 */
function bindings(
  record: PassportRecordView,
  expectation: Expectation,
  now: number,
): { checks: Check[]; matched: RecordBinding[] } {
  const required: (RequiredBinding & { under?: string })[] = [...(expectation.bindings ?? [])];
  if (expectation.baseUrl !== undefined) required.push({ class: "endpoint", under: expectation.baseUrl });
  if (required.length === 0) return { checks: [{ relied_on: {} }], matched: [] };
  const matched = new Set<RecordBinding>();
  const missing: RequiredBinding[] = [];
  const unverified: UnverifiedBinding[] = [];
  const unverifiedBindings = new Set<RecordBinding>();
  for (const need of required) {
    const hits = record.bindings.filter(
      (b) =>
        b.class === need.class &&
        (need.under !== undefined
          ? coveredBy(need.under, b.value)
          : need.value === undefined || sameBindingValue(b.value, need.value)),
    );
    const proven = hits.find((b) => unproven(b, record, now) === undefined);
    if (proven) {
      matched.add(proven);
      continue;
    }
    const [first] = hits;
    if (first) {
      unverifiedBindings.add(first);
      unverified.push(unproven(first, record, now) as UnverifiedBinding);
      continue;
    }
    missing.push({
      class: need.class,
      ...((need.under ?? need.value) ? { value: redactUrl(need.under ?? need.value ?? "") } : {}),
    });
  }
  const checks: Check[] = [];
  if (missing.length > 0) {
    const classes = new Set(missing.map((m) => m.class));
    const bound = record.bindings.filter((b) => classes.has(b.class));
    const relied_on: ReliedOn = { bindings: [...new Set([...matched, ...bound])] };
    checks.push({
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
    });
  }
  if (unverified.length > 0) {
    const relied_on: ReliedOn = { bindings: [...new Set([...matched, ...unverifiedBindings])] };
    checks.push({
      relied_on,
      finding: {
        outcome: "binding_unverified",
        next_step: "challenge",
        reason: `The record binds ${unverified
          .map((u) => `${u.class} ${redactUrl(u.value)} (${u.state}: ${u.problem})`)
          .join(
            ", ",
          )}, but the service has no current proof that the passport's holder controls it. Do not call it as this passport until the holder proves control.`,
        relied_on,
        unverified,
      },
    });
  }
  return { checks: checks.length > 0 ? checks : [{ relied_on: { bindings: [...matched] } }], matched: [...matched] };
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
  const notCounted: UncountedEvidence[] = [];
  const stale: StaleItem[] = [];
  const targets = [expectation.baseUrl, ...(expectation.bindings ?? []).map((b) => b.value)].filter(
    (t): t is string => t !== undefined,
  );
  for (const requirement of requirements) {
    const maxAge =
      requirement.maxAge === undefined ? undefined : requireDuration(requirement.maxAge, requirement.claim);
    const counted: RecordEvidence[] = [];
    for (const e of record.evidence.filter((item) => item.claim === requirement.claim)) {
      const why = uncounted(e, targets);
      if (why === undefined) counted.push(e);
      else
        notCounted.push({
          claim: e.claim,
          ...(e.id ? { evidence_id: e.id } : {}),
          ...(e.basis ? { basis: e.basis } : {}),
          ...(e.source ? { source: e.source } : {}),
          ...(e.scope ? { scope: e.scope } : {}),
          why,
        });
    }
    const candidates = counted
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
  const ignored = notCounted.filter((n) => missingClaims.includes(n.claim));
  return {
    relied_on,
    stale,
    missing: {
      outcome: "missing_evidence",
      next_step: "challenge",
      reason: `No evidence that counts supports ${missingClaims.join(", ")}; a required claim is established only by evidence the service observed, or asserted from a source its operator trusts, covering the target${ignored.length > 0 ? ` (${ignored.length} item(s) present do not count: ${ignored.map((n) => `${n.evidence_id ?? n.claim} ${n.why === "out_of_scope" ? `is scoped to ${n.scope}` : `is ${n.basis ?? "of unstated basis"}${n.source ? ` from ${n.source}` : ""}`}`).join("; ")})` : ""}.`,
      relied_on,
      missing_claims: missingClaims,
      not_counted: ignored,
    },
  };
}

/**
 * Why an evidence item cannot establish a required claim, or undefined when it can: it must be
 * observed by the service, or asserted and attested by a source the operator trusts
 * (`trusted_source` with `attested_by`; trust without an attester was a typed name, and records
 * published before attestation still carry it); and when its scope names an address and the
 * decision names targets, the scope must cover one of them.
 */
function uncounted(e: RecordEvidence, targets: string[]): UncountedEvidence["why"] | undefined {
  const trusted =
    e.basis === "observed" || (e.basis === "asserted" && e.trusted_source === true && e.attested_by !== undefined);
  if (!trusted) return "not_observed";
  if (targets.length === 0 || e.scope === undefined || !isAddressScope(e.scope)) return undefined;
  return targets.some((t) => scopeCovers(e.scope as string, t)) ? undefined : "out_of_scope";
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
