/**
 * The agent action envelope's fixed vocabulary (spec 2.4, docs/agent-envelope.md): its type and
 * version, the paths it may recommend, its action kinds, and the members every envelope carries
 * with one fixed value. The resolver derives envelopes, the domain's schema describes them and the
 * verifier checks their shape; all three take these from here.
 */
export const ENVELOPE_TYPE = "svc.agent_action_envelope";
export const ENVELOPE_VERSION = "2026-10";

export const RECOMMENDED_PATHS = [
  "view_resolver_proof",
  "improve_resolver_posture",
  "repair_resolver_posture",
  "view_developer_guidance",
] as const;
export type RecommendedPath = (typeof RECOMMENDED_PATHS)[number];

export const ENVELOPE_ACTION_KINDS = ["route", "recheck"] as const;

/** What an envelope grants, which is nothing: members that every envelope carries with these values. */
export const ENVELOPE_ASSURANCES = {
  local_policy_decides: true,
  recheck_before_reliance: true,
  no_safety_or_approval_inference: true,
  verifier_writes_truth: false,
  verifier_activates_proof: false,
  verifier_marks_bound: false,
} as const;
