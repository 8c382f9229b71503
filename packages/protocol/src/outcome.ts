/**
 * The outcome vocabulary (docs/verifier.md, Outcomes): every class a verification can end in and
 * what each says of the identity. The verifier produces them; a policy document maps them to
 * decisions, and a decision receipt records them, so the policy's and receipt's schemas list them
 * too.
 */

/**
 * What an outcome says of the identity and its proof (the CLI's exit code follows it): `passed`;
 * `unsigned`, every check held but the signature was not checked; `failed`, a check failed or
 * freshness could not be established now; `unreachable`, the proof could not be fetched (no
 * evidence against the identity); `disproved`, the record's signature, history or place in the
 * transparency log does not hold.
 */
export type OutcomeKind = "passed" | "unsigned" | "failed" | "unreachable" | "disproved";

/** Every outcome class and its kind; each class keeps one failure class of spec 7 distinct from the others. */
export const OUTCOME_KINDS = {
  ok: "passed",
  ok_signature_skipped: "unsigned",
  not_found: "failed",
  malformed_id: "failed",
  family_mismatch: "failed",
  organisation_mismatch: "failed",
  environment_or_version_mismatch: "failed",
  binding_mismatch: "failed",
  binding_unverified: "failed",
  missing_evidence: "failed",
  stale: "failed",
  state_not_operative: "failed",
  network_failure: "unreachable",
  signature_invalid: "disproved",
  unknown_key: "disproved",
  history_broken: "disproved",
  checkpoint_invalid: "disproved",
  witness_quorum_unmet: "disproved",
  rolled_back: "disproved",
  split_view: "disproved",
  inconsistent: "disproved",
  log_tampered: "disproved",
  // Like `stale`, the log could not establish freshness now: no evidence against the record.
  checkpoint_stale: "failed",
  not_in_log: "disproved",
  not_newest: "disproved",
  newest_unverified: "failed",
} as const satisfies Record<string, OutcomeKind>;
export type OutcomeClass = keyof typeof OUTCOME_KINDS;
/** Every outcome class. */
export const OUTCOME_CLASSES = Object.keys(OUTCOME_KINDS) as readonly OutcomeClass[];

/**
 * What to do next (spec 4.6, spec 7 fail-safe principle). `proceed` means only that the identity
 * checks passed: authenticate to the API separately and evaluate action-specific authority.
 */
export type NextStep = "proceed" | "challenge" | "deny" | "delay" | "re-resolve";
