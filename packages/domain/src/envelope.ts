import { ENVELOPE_ASSURANCES, ENVELOPE_TYPE, ENVELOPE_VERSION, isIdentityId } from "@passport/protocol";
import { canonicalOf, canonicalUrl } from "./canonical-url.ts";
import type { AgentActionEnvelope } from "./envelope-schema.ts";
import type { ModelContext, PassportRecord } from "./record.ts";

const AUTHORITY_BOUNDARY =
  "This envelope is read-only routing information derived from the published passport record. It grants no authority, approval or permission, does not change verification or binding state, and does not establish safety. The verifier's local policy decides; re-check the resolver record before relying on it.";

/** Which evidence claims an agent passport needs before its proof counts as current (configuration). */
interface EnvelopePolicy {
  requiredClaims: string[];
}

export type EnvelopeTarget = { kind: "identity"; identityId: string } | { kind: "manifest"; url: string };

/** Reads the `target` query value: an identity id or an http(s) manifest URL; anything else is undefined. */
export function parseEnvelopeTarget(target: string | undefined): EnvelopeTarget | undefined {
  if (!target || target.length > 2048) return undefined;
  if (isIdentityId(target)) return { kind: "identity", identityId: target };
  const url = URL.parse(target);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password) return undefined;
  // The manifest index and the bindings hold the canonical form (docs/canonical-urls.md).
  const canonical = canonicalOf(url);
  return canonical ? { kind: "manifest", url: canonical } : undefined;
}

export interface EnvelopeInput {
  target: string;
  parsed: EnvelopeTarget;
  /** The records the target resolves to: none, one, or several when a manifest is claimed more than once. */
  records: PassportRecord[];
  policy: EnvelopePolicy;
  resolverBaseUrl: string;
  /** The Dashboard's base URL: a repair answer points at the passport's page there. */
  dashboardBaseUrl?: string;
  developerGuidanceUrl: string;
  now: Date;
}

type Verdict = Pick<AgentActionEnvelope, "posture" | "result" | "recommended_path"> & {
  missing_evidence?: string[];
  stale_evidence?: string[];
};

type Binding = PassportRecord["bindings"][number];

/**
 * The rule table of docs/agent-envelope.md, first matching row wins. `manifests`: the record's
 * manifest bindings whose value is the target asked about (none when asked by identity id).
 */
function verdict(input: EnvelopeInput, record: PassportRecord | undefined, manifests: Binding[]): Verdict {
  if (input.records.length > 1) {
    // The manifest index holds only proven manifests, so several claimants that all prove control
    // of the target are a genuine conflict, not a claim someone merely typed.
    const proven = input.records.every((r) =>
      manifestBindings(r, input.parsed).some((b) => bindingProven(b, input.now)),
    );
    return {
      posture: "ambiguous",
      result: proven ? "conflicting_proof" : "ambiguous_target",
      recommended_path: "repair_resolver_posture",
    };
  }
  if (!record) return { posture: "no_passport", result: "not_found", recommended_path: "view_developer_guidance" };
  if (record.family !== "agent") {
    return { posture: "not_agent", result: "family_mismatch", recommended_path: "view_developer_guidance" };
  }
  if (input.parsed.kind === "manifest" && manifests.length === 0) {
    return { posture: "needs_repair", result: "binding_mismatch", recommended_path: "repair_resolver_posture" };
  }
  if (input.parsed.kind === "manifest" && !manifests.some((b) => bindingProven(b, input.now))) {
    return { posture: "needs_repair", result: "binding_unproven", recommended_path: "repair_resolver_posture" };
  }
  if (record.state.lifecycle !== "active") {
    return {
      posture: "needs_repair",
      result: `lifecycle_${record.state.lifecycle}`,
      recommended_path: "repair_resolver_posture",
    };
  }
  if (record.state.availability === "degraded" || record.state.availability === "unavailable") {
    return {
      posture: "needs_repair",
      result: `availability_${record.state.availability}`,
      recommended_path: "repair_resolver_posture",
    };
  }
  const now = input.now.getTime();
  const missing: string[] = [];
  const stale: string[] = [];
  for (const claim of input.policy.requiredClaims) {
    const items = record.evidence.filter((e) => e.claim === claim && countsForRequiredClaims(e));
    if (items.length === 0) missing.push(claim);
    else if (items.every((e) => e.fresh_until !== undefined && Date.parse(e.fresh_until) <= now)) stale.push(claim);
  }
  if (missing.length > 0 || stale.length > 0) {
    return {
      posture: "incomplete",
      result: missing.length > 0 ? "missing_evidence" : "stale_evidence",
      recommended_path: "improve_resolver_posture",
      missing_evidence: [...missing, ...stale],
      stale_evidence: stale,
    };
  }
  if (record.state.recheck_required) {
    return { posture: "incomplete", result: "recheck_required", recommended_path: "improve_resolver_posture" };
  }
  return { posture: "current", result: "proof_current", recommended_path: "view_resolver_proof" };
}

/**
 * Required claims are established only by evidence the service observed itself, or asserted
 * evidence a source the operator trusts attested (record contract, docs/evidence-attestation.md).
 * Items without a basis predate it and count as asserted; `trusted_source` without `attested_by`
 * was decided by a typed name alone (records published before attestation) and does not count.
 */
function countsForRequiredClaims(evidence: PassportRecord["evidence"][number]): boolean {
  return (
    evidence.basis === "observed" ||
    (evidence.basis === "asserted" && evidence.trusted_source === true && evidence.attested_by !== undefined)
  );
}

/** A binding's proof is current: verified and not past its freshness (absent verification is claimed). */
function bindingProven(binding: Binding, now: Date): boolean {
  const v = binding.verification;
  return v?.state === "verified" && Date.parse(v.fresh_until) > now.getTime();
}

/** The record's manifest bindings whose value, canonicalised, is the manifest target; none for an identity target. */
function manifestBindings(record: PassportRecord, target: EnvelopeTarget): Binding[] {
  if (target.kind !== "manifest") return [];
  return record.bindings.filter((b) => b.class === "manifest" && canonicalUrl(b.value) === target.url);
}

/**
 * The environment and version the envelope reports: those of the manifest binding asked about
 * where it states them, else the passport's state (each member on its own); absent when neither
 * says. Asked by identity id, the passport's state. The model the agent runs (spec 1.1) comes from
 * the state only: context for the reader, never an input to the posture.
 */
function runtimeContext(
  record: PassportRecord,
  binding: Binding | undefined,
): { environment?: string; version?: string; model?: ModelContext } {
  const environment = binding?.environment ?? record.state.environment;
  const version = binding?.version ?? record.state.version;
  const model = record.state.model;
  return { ...(environment ? { environment } : {}), ...(version ? { version } : {}), ...(model ? { model } : {}) };
}

/**
 * Derives the agent action envelope for a target from published records only.
 * @example
 * const envelope = deriveEnvelope({ target, parsed, records: [record], policy, resolverBaseUrl, developerGuidanceUrl, now: new Date() });
 */
export function deriveEnvelope(input: EnvelopeInput): AgentActionEnvelope {
  const record = input.records.length === 1 ? input.records[0] : undefined;
  // The target's manifest bindings are found once, each binding canonicalised once.
  const manifests = record ? manifestBindings(record, input.parsed) : [];
  const outcome = verdict(input, record, manifests);
  const resolverUrl = record ? `${input.resolverBaseUrl}/p/${record.identity_id}` : null;
  const machineJsonUrl = record ? `${input.resolverBaseUrl}/api/p/${record.identity_id}.json` : null;
  const recheckUrl =
    machineJsonUrl ?? `${input.resolverBaseUrl}/api/agent-envelope?target=${encodeURIComponent(input.target)}`;
  const actions: AgentActionEnvelope["actions"] = [
    { label: record ? "Re-check the machine JSON record" : "Re-check this envelope", kind: "recheck", url: recheckUrl },
  ];
  if (resolverUrl) actions.push({ label: "View the resolver proof page", kind: "route", url: resolverUrl });
  if (outcome.recommended_path !== "view_resolver_proof") {
    actions.push({ label: "Read the developer guidance", kind: "route", url: input.developerGuidanceUrl });
  }
  return {
    type: ENVELOPE_TYPE,
    version: ENVELOPE_VERSION,
    subject: {
      target: input.target,
      target_type: "agent_manifest",
      ...(record ? runtimeContext(record, manifests[0]) : {}),
    },
    posture: outcome.posture,
    result: outcome.result,
    missing_evidence: outcome.missing_evidence ?? [],
    recommended_path: outcome.recommended_path,
    actions,
    resolver_url: resolverUrl,
    machine_json_url: machineJsonUrl,
    ...(record && input.dashboardBaseUrl && outcome.recommended_path === "repair_resolver_posture"
      ? { ops_action_url: `${input.dashboardBaseUrl.replace(/\/$/, "")}/dashboard/passports/${record.identity_id}` }
      : {}),
    ...(record ? { organisation: { id: record.organisation.id, name: record.organisation.name } } : {}),
    developer_guidance_url: input.developerGuidanceUrl,
    authority_boundary: AUTHORITY_BOUNDARY,
    ...ENVELOPE_ASSURANCES,
    identity_id: record?.identity_id ?? null,
    ...(record ? { record_version: record.record_version } : {}),
    ...(outcome.stale_evidence?.length ? { stale_evidence: outcome.stale_evidence } : {}),
    evaluated_at: input.now.toISOString(),
  };
}
