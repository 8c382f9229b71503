/** The evidence check: each claim required must be established by evidence that counts, fresh enough. */
import { type EvidenceRequirement, type Expectation, requireDuration } from "../expectation.ts";
import type { Finding, ReliedOn, StaleItem, UncountedEvidence } from "../outcome.ts";
import type { PassportRecordView, RecordEvidence } from "../record.ts";
import { isAddressScope, scopeCovers } from "../url-match.ts";

function ageOf(timestamp: string | undefined, now: number): number | undefined {
  const at = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(at) ? undefined : Math.max(0, (now - at) / 1000);
}

export interface EvidenceResult {
  relied_on: ReliedOn;
  missing?: Finding;
  stale: StaleItem[];
}

export function evidence(record: PassportRecordView, expectation: Expectation, now: number): EvidenceResult {
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
