import type { AgentCardProblem, ProvenCardSignature } from "../a2a-card.ts";
import { formatAge } from "../checks.ts";
import type { DecisionResult } from "../decide.ts";
import type { EnvelopeResult } from "../envelope.ts";
import type { AuditReport } from "../log/audit.ts";
import type { CheckpointView, Proof, ProofSource, ReliedOn, VerifyOutcome } from "../outcome.ts";
import type { PassportRecordView, RecordBinding } from "../record.ts";
import type { ResolveResult } from "../verifier.ts";
import { readsAs } from "./terminal.ts";

function lines(value: unknown, prefix = ""): string[] {
  if (Array.isArray(value)) {
    if (value.length === 0) return [`${prefix}: (none)`];
    return value.flatMap((item, index) => lines(item, `${prefix}[${index}]`));
  }
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => lines(item, prefix ? `${prefix}.${key}` : key));
  }
  return [`${prefix}: ${String(value)}`];
}

function source(s: ProofSource | undefined): string[] {
  if (!s) return [];
  const how = s.from_cache ? "from cache" : s.revalidated ? "revalidated (304)" : `fetched in ${s.attempts} attempt(s)`;
  return [`  Proof:      ${s.url} (${how}, copy age ${formatAge(s.age_seconds)})`];
}

function proof(p: Proof | undefined): string[] {
  if (!p) return [];
  const signature =
    p.signature === "verified"
      ? `signature verified (key ${p.kid})`
      : "signature NOT CHECKED (--insecure-no-signature; pass --jwks)";
  const history =
    p.history === "verified"
      ? "history verified"
      : p.history === "chain_only"
        ? "history chains (entry signatures not checked)"
        : "history not checked (--history)";
  const compared = p.compared_with ? `; not older than version ${p.compared_with.record_version}` : "";
  const log = p.log
    ? [
        `  Log:        entry ${p.log.index} included in ${checkpoint(p.log.checkpoint)}; ${p.log.newest === "status_token" ? "newest version by the stapled status token" : `newest version as of it (${p.log.bundles_scanned} entry bundle(s) read)`}; remembered checkpoint: ${p.log.remembered}`,
      ]
    : [];
  return [`  Integrity:  digest verified; ${signature}; ${history}${compared}`, ...log];
}

function checkpoint(c: CheckpointView): string {
  const cosigned = c.cosigners.length > 0 ? `, cosigned by ${c.cosigners.join(", ")}` : "";
  return `checkpoint ${c.size} of ${c.origin} (${c.time}, age ${formatAge(c.age_seconds)}${cosigned})`;
}

function relied(relied_on: ReliedOn): string[] {
  const all = lines(relied_on);
  return all.length === 0 ? [] : ["  Relied on:", ...all.map((l) => `    ${l}`)];
}

function extra(result: VerifyOutcome): string[] {
  switch (result.outcome) {
    case "network_failure":
      return [`  Failure:    ${result.kind}${result.status ? ` (HTTP ${result.status})` : ""}: ${result.detail}`];
    case "malformed_id":
      return [`  Defect:     ${result.defect ?? "refused by the resolver"}`];
    case "not_found":
      return [`  Resolver:   ${result.resolver_url}`];
    case "ok":
    case "ok_signature_skipped":
      return result.unchecked.length > 0 ? [`  Not checked: ${result.unchecked.join(", ")}`] : [];
    case "binding_unverified":
      return result.unverified.map(
        (u) => `  Unverified: ${u.class} ${u.value}${readsAs(u.value)} (${u.state}): ${u.problem}`,
      );
    case "missing_evidence":
      return result.not_counted.map(
        (n) =>
          `  Not counted: ${n.evidence_id ?? n.claim} (${n.why === "out_of_scope" ? `scope ${n.scope}` : `${n.basis ?? "no basis"}${n.source ? `, source ${n.source}` : ""}`})`,
      );
    case "signature_invalid":
      return [
        `  Problem:    ${result.kind}${result.kid ? ` (key ${result.kid})` : ""}${result.detail ? `: ${result.detail}` : ""}`,
        ...(result.computed_digest
          ? [`  Digest:     stated ${result.stated_digest ?? "(none)"}, content ${result.computed_digest}`]
          : []),
      ];
    case "unknown_key":
      return [
        `  Key:        ${result.kid} signed the ${result.signed === "record" ? "record" : `history entry for version ${result.record_version}`}`,
        `  Trusted:    ${result.trusted_kids.join(", ") || "(none)"}`,
      ];
    case "history_broken":
      return [
        `  Problem:    ${result.kind} at version ${result.at_version} (against the ${result.against === "seen_version" ? "version seen before" : "published history"})`,
        ...(result.expected !== undefined
          ? [`  Expected:   ${result.expected}`, `  Found:      ${result.actual}`]
          : []),
      ];
    case "checkpoint_invalid":
      return [`  Problem:    ${result.kind}: ${result.detail}`];
    case "witness_quorum_unmet":
      return [
        `  Witnesses:  ${result.cosigners.length} of ${result.required} required (${result.cosigners.join(", ") || "none"})`,
      ];
    case "rolled_back":
    case "inconsistent":
      return [`  Sizes:      remembered ${result.remembered_size}, offered ${result.offered_size}`];
    case "split_view":
      return [
        `  Size:       ${result.size}`,
        `  Roots:      remembered ${result.remembered_root}, offered ${result.offered_root}`,
      ];
    case "log_tampered":
      return [`  Tile:       ${result.tile}: ${result.detail}`];
    case "checkpoint_stale":
      return [`  Checkpoint: ${checkpoint(result.checkpoint)}; at most ${formatAge(result.max_age_seconds)} allowed`];
    case "not_in_log":
      return [`  Problem:    ${result.kind}: ${result.detail}`];
    case "not_newest":
      return [
        `  Newer:      version ${result.newer_version} at entry ${result.newer_index} (found by ${result.via === "hint" ? "the latest hint" : "reading the bundles"}); served version ${result.record_version}`,
      ];
    case "newest_unverified":
      return [
        `  Scan:       ${result.bundles_needed} bundles after entry ${result.index}; at most ${result.max_bundles} allowed (--log-scan)`,
      ];
    default: {
      const others = result.findings.slice(1).map((f) => `    ${f.outcome}: ${f.reason}`);
      return others.length > 0 ? ["  Also failed:", ...others] : [];
    }
  }
}

/** A readable summary of a verification result. */
export function formatVerify(result: VerifyOutcome): string {
  return [
    `${result.ok ? "OK  " : result.outcome === "ok_signature_skipped" ? "INSECURE" : "FAIL"}  ${result.outcome}  ${result.identity_id}`,
    `  ${result.reason}`,
    `  Next step:  ${result.next_step}`,
    ...extra(result),
    ...relied(result.relied_on),
    ...proof(result.proof),
    ...current(result),
    ...source(result.source),
    `  ${result.authorization_note}`,
  ].join("\n");
}

/** The current-proof line of a `higher` decision: which status token, and as of when. */
/** `verify --policy`: the decision first and why, then the identity check as `verify` prints it. */
export function formatDecision(result: DecisionResult): string {
  const { receipt, outcome, authority } = result;
  const identity =
    outcome.outcome === "ok" ? "the identity checks passed" : `the identity check gave ${outcome.outcome}`;
  const why =
    authority && authority.result !== "held" && outcome.outcome === "ok"
      ? `${identity}, but the authority for ${authority.action} is ${authority.result}: ${authority.detail}`
      : `${identity}${authority ? `; authority for ${authority.action}: ${authority.result}` : ""}`;
  return [
    `DECISION  ${result.decision}  for action ${receipt.action}  (policy ${receipt.policy_digest})`,
    `  Why:  ${why}.`,
    formatVerify(outcome).replace("  Next step:  ", "  Next step without a policy:  "),
  ].join("\n");
}

function current(result: VerifyOutcome): string[] {
  const status = result.proof?.status;
  if (!status) return [];
  const as = result.current_as_of ? `current as of ${result.current_as_of}` : "NOT current";
  const states = `version ${status.record_version ?? "none published"}, ${status.lifecycle}, ${status.publication}`;
  return [`  Status:       ${as} (${status.source} token, ${states}, expires ${status.expires_at})`];
}

function record(r: PassportRecordView): string[] {
  const s = r.state;
  const org = r.organisation
    ? `${r.organisation.name ?? r.organisation.id} (${r.organisation.id}${r.organisation.relationship ? `, ${r.organisation.relationship}` : ""}${r.organisation.parent ? `, parent ${r.organisation.parent.id}` : ""})`
    : "(not stated)";
  const state = [
    s.lifecycle,
    s.availability,
    s.environment && `environment ${s.environment}`,
    s.version && `version ${s.version}`,
    s.recheck_required && "re-check required",
    s.duplicate_of && `duplicate of ${s.duplicate_of}`,
  ]
    .filter(Boolean)
    .join(", ");
  return [
    `  Family:       ${r.family}${r.display_name ? ` (${r.display_name})` : ""}`,
    `  Organisation: ${org}`,
    `  State:        ${state}${s.as_of ? ` as of ${s.as_of}` : ""}`,
    `  Bindings:     ${r.bindings.length === 0 ? "(none)" : ""}`,
    ...r.bindings.map((b) => `    ${b.class} ${b.value}${readsAs(b.value)}  [${bindingState(b)}]`),
    `  Evidence:     ${r.evidence.length === 0 ? "(none)" : ""}`,
    ...r.evidence.map(
      (e) =>
        `    ${e.claim} (${e.basis ?? "basis not stated"}${e.basis === "asserted" ? `${e.trusted_source && e.attested_by ? `, attested by ${e.attested_by.source} (key ${e.attested_by.key_id})` : ""}${e.source ? ` by ${e.source}` : ""}` : ""})${e.observed_at ? ` observed ${e.observed_at}` : ""}${e.fresh_until ? `, fresh until ${e.fresh_until}` : ""}`,
    ),
    `  Record:       version ${r.record_version ?? "?"}, published ${r.published_at ?? "?"}`,
  ];
}

function bindingState(b: RecordBinding): string {
  const v = b.verification;
  if (!v) return "claimed";
  if (v.state === "verified") return `verified by ${v.method ?? "?"}${v.fresh_until ? ` until ${v.fresh_until}` : ""}`;
  if (v.state === "lapsed") return `lapsed${v.reason ? `: ${v.reason}` : ""}`;
  return v.state;
}

/** A readable summary of a resolution. */
export function formatResolve(result: ResolveResult): string {
  if (result.outcome !== "resolved") return formatVerify(result);
  return [
    `${result.proof.signature === "verified" ? "FOUND" : "FOUND UNSIGNED"}  ${result.identity_id}`,
    ...record(result.record),
    ...proof(result.proof),
    ...source(result.source),
  ].join("\n");
}

/** A readable summary of an envelope request. */
export function formatEnvelope(result: EnvelopeResult): string {
  switch (result.outcome) {
    case "envelope": {
      const e = result.envelope;
      return [
        `ENVELOPE  ${e.subject.target}  (version ${e.version})`,
        `  Posture:          ${e.posture}`,
        `  Result:           ${e.result}`,
        `  Missing evidence: ${e.missing_evidence.length > 0 ? e.missing_evidence.join(", ") : "(none)"}`,
        `  Recommended path: ${e.recommended_path}`,
        ...e.actions.map((a) => `  Action (${a.kind}): ${a.label}${a.url ? ` ${a.url}` : ""}`),
        `  Authority boundary: ${e.authority_boundary}`,
        "  Local policy decides; re-check before reliance. The envelope grants nothing.",
      ].join("\n");
    }
    case "envelope_unavailable":
      return `UNAVAILABLE  ${result.target}\n  ${result.detail}.\n  The envelope route depends on the resolver; use \`passport verify\` meanwhile.`;
    case "not_found":
      return `FAIL  not_found  ${result.target}\n  ${result.detail ?? "The resolver knows no such target."}`;
    case "malformed_id":
      return `FAIL  malformed_id  ${result.target}\n  ${result.detail}`;
    case "network_failure":
      return `FAIL  network_failure  ${result.target}\n  ${result.kind}${result.status ? ` (HTTP ${result.status})` : ""}: ${result.detail}\n  Could not fetch proof; this is not evidence against the identity.`;
  }
}

/** A readable summary of a log audit. */
export function formatAudit(report: AuditReport): string {
  const range = report.range ? ` entries [${report.range.from}, ${report.range.to})` : "";
  return [
    `${report.ok ? "OK  " : "FAIL"}  ${report.outcome}  ${report.log}${range}`,
    `  ${report.reason}`,
    ...(report.checkpoint ? [`  Checkpoint: ${checkpoint(report.checkpoint)}`] : []),
    `  Checked:    ${report.entries_checked} entries of ${report.passports_checked} passports; ${report.bundles_checked} bundles, ${report.tiles_checked} tiles`,
    ...(report.tampered ? [`  Tampered:   ${report.tampered.tile}: ${report.tampered.detail}`] : []),
    ...report.mismatches.map(
      (m) =>
        `  Mismatch:   entry ${m.index}${m.identity_id ? ` ${m.identity_id} v${m.record_version}` : ""}: ${m.problem}${m.published_digest ? ` (logged ${m.logged_digest}, published ${m.published_digest})` : ""}`,
    ),
    ...(report.network ? [`  Failure:    ${report.network.kind}: ${report.network.detail}`] : []),
  ].join("\n");
}

/** `passport verify-card`'s answer: the card's check against the passport, or why there was none. */
export type CardCheckResult = {
  card_url: string;
  outcome: "card_signed" | "card_unavailable" | "passport_unnamed" | AgentCardProblem;
  identity_id?: string;
  /** Whether the record the keys came from had its signature checked (`skipped` with --insecure-no-signature). */
  record_signature?: string;
  signatures?: ProvenCardSignature[];
  detail?: string;
};

/** A readable summary of an agent card's check. */
export function formatCardCheck(result: CardCheckResult): string {
  const subject = `${result.card_url}${result.identity_id ? `  ${result.identity_id}` : ""}`;
  const record = result.record_signature ? [`  Record signature: ${result.record_signature}`] : [];
  if (result.outcome === "card_signed") {
    return [
      `OK  card_signed  ${subject}`,
      ...(result.signatures ?? []).map(
        (s) => `  Signature ${s.index}: key ${s.thumbprint} (${s.alg}), proven by ${s.directory}`,
      ),
      ...record,
    ].join("\n");
  }
  return [`FAIL  ${result.outcome}  ${subject}`, `  ${result.detail ?? ""}`, ...record].join("\n");
}
