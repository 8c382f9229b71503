/** The bindings check: each target the decision names must be bound, with current proof. */
import type { Expectation } from "../expectation.ts";
import type { ReliedOn, RequiredBinding, UnverifiedBinding } from "../outcome.ts";
import type { PassportRecordView, RecordBinding } from "../record.ts";
import { coveredBy, redactUrl, sameBindingValue, scopeCovers } from "../url-match.ts";
import type { Check } from "./check.ts";

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
export function bindings(
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
