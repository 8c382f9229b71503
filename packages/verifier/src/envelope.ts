import {
  describeIdentityIdDefect,
  ENVELOPE_ACTION_KINDS,
  ENVELOPE_ASSURANCES,
  ENVELOPE_TYPE,
  identityIdDefect,
  RECOMMENDED_PATHS,
  type RecommendedPath,
} from "@passport/protocol";
import { fetchWithRetry, PROBLEM_TYPE_BASE, readFailureKind, readProblem, readStrictJson } from "./http.ts";
import type { NetworkFailureKind } from "./outcome.ts";
import type { Verifier } from "./verifier.ts";

/** Spec 2.4. Additional members are allowed and kept. */
export interface AgentActionEnvelope {
  type: typeof ENVELOPE_TYPE;
  version: string;
  subject: { target: string; target_type: "agent_manifest"; [extra: string]: unknown };
  posture: string;
  result: string;
  missing_evidence: string[];
  recommended_path: RecommendedPath;
  actions: {
    label: string;
    kind: (typeof ENVELOPE_ACTION_KINDS)[number];
    url?: string | null;
    [extra: string]: unknown;
  }[];
  resolver_url?: string | null;
  machine_json_url?: string | null;
  ops_action_url?: string;
  developer_guidance_url?: string;
  authority_boundary: string;
  local_policy_decides: true;
  recheck_before_reliance: true;
  no_safety_or_approval_inference: true;
  verifier_writes_truth: false;
  verifier_activates_proof: false;
  verifier_marks_bound: false;
  [extra: string]: unknown;
}

export type EnvelopeResult =
  | { outcome: "envelope"; target: string; envelope: AgentActionEnvelope; url: string }
  /** The resolver has no envelope route (it answered 404 for the route itself). */
  | { outcome: "envelope_unavailable"; target: string; url: string; detail: string }
  | { outcome: "not_found"; target: string; url: string; detail?: string }
  | { outcome: "malformed_id"; target: string; detail: string }
  | {
      outcome: "network_failure";
      target: string;
      url: string;
      kind: NetworkFailureKind;
      status?: number;
      detail: string;
    };

const PATHS: readonly string[] = RECOMMENDED_PATHS;
const KINDS: readonly unknown[] = ENVELOPE_ACTION_KINDS;

/**
 * Why a value is not an agent action envelope (spec 2.4), or `undefined` when it is one.
 * @example
 * envelopeProblem({ type: "something else" }); // "type is not svc.agent_action_envelope"
 */
export function envelopeProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const e = value as Record<string, unknown>;
  const subject = e.subject as Record<string, unknown> | undefined;
  const optionalText = (v: unknown) => v === undefined || v === null || typeof v === "string";
  if (e.type !== ENVELOPE_TYPE) return `type is not ${ENVELOPE_TYPE}`;
  for (const name of ["version", "posture", "result", "authority_boundary"]) {
    if (typeof e[name] !== "string") return `${name} is missing or not a string`;
  }
  if (typeof subject !== "object" || subject === null) return "subject is missing";
  if (typeof subject.target !== "string") return "subject.target is missing or not a string";
  if (subject.target_type !== "agent_manifest") return "subject.target_type is not agent_manifest";
  if (!Array.isArray(e.missing_evidence) || !e.missing_evidence.every((m) => typeof m === "string")) {
    return "missing_evidence is not an array of strings";
  }
  if (!PATHS.includes(e.recommended_path as string)) return "recommended_path is not one of the allowed values";
  if (!Array.isArray(e.actions)) return "actions is not an array";
  for (const action of e.actions as Record<string, unknown>[]) {
    if (typeof action?.label !== "string" || !KINDS.includes(action.kind) || !optionalText(action.url)) {
      return "an action lacks a label, a kind of route or recheck, or has a url that is not a string";
    }
  }
  for (const name of ["resolver_url", "machine_json_url"])
    if (!optionalText(e[name])) return `${name} is not a string or null`;
  for (const name of ["ops_action_url", "developer_guidance_url"]) {
    if (e[name] !== undefined && typeof e[name] !== "string") return `${name} is not a string`;
  }
  for (const [name, constant] of Object.entries(ENVELOPE_ASSURANCES)) {
    if (e[name] !== constant) return `${name} is not ${constant}`;
  }
  return undefined;
}

/**
 * Asks the resolver for the agent action envelope of a target (an agent manifest URL or an
 * identity id) at `GET {resolver}/api/agent-envelope?target=...`. The route is this project's
 * choice (spec 4.5 leaves it open) and may not be deployed yet: a 404 for the route itself is
 * reported as `envelope_unavailable`, distinct from an unknown target.
 * @example
 * const result = await fetchEnvelope(verifier, "https://agents.example/support/agent-card.json");
 * if (result.outcome === "envelope") result.envelope.recommended_path;
 */
export async function fetchEnvelope(
  resolver: Pick<Verifier, "resolver" | "http">,
  target: string,
  signal?: AbortSignal,
): Promise<EnvelopeResult> {
  if (target.startsWith("psp_") || target.toLowerCase().startsWith("psp_")) {
    const defect = identityIdDefect(target);
    if (defect) return { outcome: "malformed_id", target, detail: describeIdentityIdDefect(defect) };
  }
  const url = `${resolver.resolver}/api/agent-envelope?target=${encodeURIComponent(target)}`;
  const answer = await fetchWithRetry(url, { headers: { accept: "application/json" } }, resolver.http, signal);
  if (!answer.ok) {
    return {
      outcome: "network_failure",
      target,
      url,
      kind: answer.kind,
      ...(answer.status ? { status: answer.status } : {}),
      detail: answer.detail,
    };
  }
  const { response } = answer;
  if (response.status === 200) {
    const read = await readStrictJson(response, resolver.http.maxBytes);
    const body = read.ok ? read.value : undefined;
    const problem = read.ok ? envelopeProblem(body) : read.problem;
    if (problem) {
      return {
        outcome: "network_failure",
        target,
        url,
        kind: read.ok ? "unexpected_response" : readFailureKind(read),
        status: 200,
        detail: `not an agent action envelope: ${problem}`,
      };
    }
    return { outcome: "envelope", target, envelope: body as AgentActionEnvelope, url };
  }
  const problem = await readProblem(response);
  if (response.status === 404 && problem.type === `${PROBLEM_TYPE_BASE}identity-not-found`) {
    return { outcome: "not_found", target, url, ...(problem.detail ? { detail: problem.detail } : {}) };
  }
  if (response.status === 404) {
    return {
      outcome: "envelope_unavailable",
      target,
      url,
      detail: "this resolver does not serve agent action envelopes (GET /api/agent-envelope answered 404)",
    };
  }
  if (response.status === 400 && problem.type === `${PROBLEM_TYPE_BASE}malformed-identity-id`) {
    return { outcome: "malformed_id", target, detail: problem.detail ?? "the resolver refused the id as malformed" };
  }
  return {
    outcome: "network_failure",
    target,
    url,
    kind: "unexpected_response",
    status: response.status,
    detail: `the resolver answered ${response.status}${problem.detail ? `: ${problem.detail}` : ""}`,
  };
}
