// Long on purpose: this is the one table of what a check can answer, every outcome's shape beside
// the others, so a consumer (and `OUTCOME_KINDS`) reads the whole vocabulary in one place.
import type { IdentityIdDefect, NextStep, OutcomeClass } from "@passport/protocol";
import type { PassportRecordView, RecordBinding, RecordOrganisation, RecordState } from "./record.ts";

/** Carried by every outcome: spec 1.4 and 4.6 ("identity is never converted into blanket permission"). */
export const IDENTITY_IS_NOT_AUTHORIZATION =
  "Identity is not authorization: this result does not authenticate the caller or the API, and grants no permission. Authenticate to the API separately and evaluate action-specific authority at the point of consequence.";

/** Where the proof came from and how old it was when the decision was made. */
export interface ProofSource {
  /** The resolver address that was (or would have been) asked. */
  url: string;
  /** When this copy was last confirmed by the resolver (ISO 8601). */
  fetched_at: string;
  /** Age of the copy in seconds: the `Age` the resolver reported plus the time since it was fetched. */
  age_seconds: number;
  etag?: string;
  /** True when the answer came from the in-memory cache without a request. */
  from_cache: boolean;
  /** True when the resolver confirmed the cached copy with 304 Not Modified. */
  revalidated: boolean;
  /** HTTP attempts made (0 when served from the cache or supplied). */
  attempts: number;
  /** True when the caller supplied the record (`record`) instead of the verifier fetching it. */
  supplied?: boolean;
}

/** The record members a decision relied on; a subset of the record, shaped like it. */
export type ReliedOn = Partial<Omit<PassportRecordView, "state">> & { state?: Partial<RecordState> };

interface FindingBase<K extends OutcomeClass> {
  outcome: K;
  next_step: NextStep;
  /** One sentence for a person. */
  reason: string;
  /** The record members this result relied on (empty when no record was read). */
  relied_on: ReliedOn;
}

/**
 * How far the record's authenticity was established (docs/signing.md). `digest` is always
 * recomputed; the signature is checked only against keys the caller configured, and the history
 * only when asked for.
 */
export interface Proof {
  digest: "verified";
  /** `verified` with `kid`; `skipped_insecure` only when the caller opted out of signatures (`signature: "skip-insecure"`). */
  signature: "verified" | "skipped_insecure";
  kid?: string;
  /** `verified`: the published history chains to this record and every entry's signature holds; `chain_only`: the same without trusted keys. */
  history: "verified" | "chain_only" | "not_checked";
  /** The version seen before that this record was compared with (the caller's `seen`, or the verifier's cached copy). */
  compared_with?: SeenVersion;
  /** Present when the verifier was given `log`: the record's entry, the checkpoint, and how "newest" was established. */
  log?: LogProof;
  /** Present at `higher` consequence when a valid status token was checked (docs/verifier.md, Current proof). */
  status?: StatusProof;
}

/** The status token a `higher` decision was checked against. */
export interface StatusProof {
  /** `stapled`: given by the caller (an API provider's `Passport-Status` header); `fetched`: read from the resolver's status route. */
  source: "stapled" | "fetched";
  /** The key that signed it; absent when signatures are skipped (`signature: "skip-insecure"`). */
  kid?: string;
  issued_at: string;
  expires_at: string;
  record_version?: number;
  digest?: string;
  publication: "published" | "pending";
  lifecycle: string;
}

/** A signed checkpoint of the transparency log, as a result reports it. */
export interface CheckpointView {
  origin: string;
  size: number;
  /** Base64, as in the checkpoint. */
  root_hash: string;
  /** The checkpoint's `time` line. */
  time: string;
  age_seconds: number;
  /** Configured witnesses whose cosignature verified. */
  cosigners: string[];
}

/** What the transparency log established about the record (docs/transparency-log.md, Consumer). */
export interface LogProof {
  /** The record's entry: its index (`Passport-Log-Index`), proved included in `checkpoint`. */
  index: number;
  checkpoint: CheckpointView;
  /** How the checkpoint relates to the one remembered: `not_kept` when the verifier has no store. */
  remembered: "first" | "unchanged" | "extended" | "not_kept";
  /** The entry bundles read after the record's entry to establish that it is the newest version. */
  bundles_scanned: number;
  /**
   * How the record was shown to be the newest version: `log` (the latest hint and the bundles after
   * the entry, as of the checkpoint) or `status_token` (a stapled status token, checked against the
   * pinned keys, names this very version and digest as current; no bundle read). Docs: verifier.md.
   */
  newest: "log" | "status_token";
}

/** A record version seen before, to detect an older record replayed as current. */
export interface SeenVersion {
  record_version: number;
  digest: string;
  /**
   * When that version was published (its `published_at`). With it, an older version served within
   * the propagation window after it is `stale` (a cache has not caught up), not a rollback.
   */
  published_at?: string;
}

interface Common<Ok extends boolean> {
  ok: Ok;
  identity_id: string;
  identity_is_not_authorization: true;
  authorization_note: typeof IDENTITY_IS_NOT_AUTHORIZATION;
  source?: ProofSource;
  /** Present once a record was read and its proof checked. */
  proof?: Proof;
  /** Every failed check, in order of precedence; the outcome is the first. Empty for `ok` and for failures before a record was read. */
  findings: Finding[];
  /**
   * At `higher` consequence: when the service's authoritative state was last confirmed to match
   * the record relied on (the status token's issue time). Absent when no valid token was checked.
   */
  current_as_of?: string;
}

export interface Ok extends FindingBase<"ok">, Common<true> {
  source: ProofSource;
  /** Aspects the expectation did not constrain, and so this `ok` says nothing about. */
  unchecked: string[];
}

/**
 * Every expectation held, but the caller opted out of the signature check, so the record may have
 * been forged or altered on the way: never `ok`, and `ok: false`.
 */
export interface OkSignatureSkipped extends FindingBase<"ok_signature_skipped">, Common<false> {
  source: ProofSource;
  unchecked: string[];
}

export interface NotFound extends FindingBase<"not_found">, Common<false> {
  resolver_url: string;
  detail?: string;
  /**
   * Set when a valid status token says the id was issued and its first publication is still
   * pending (the outbox retries it): an issuance delay, not an unknown id; next step `delay`.
   */
  publication_pending?: { next_attempt_at?: string; status_issued_at: string };
}

export interface MalformedId extends FindingBase<"malformed_id">, Common<false> {
  /** Set when the id was classified locally; absent when only the resolver refused it. */
  defect?: IdentityIdDefect;
  detail: string;
}

export interface FamilyMismatchFinding extends FindingBase<"family_mismatch"> {
  expected: string;
  actual: string;
}

export interface OrganisationExpectation {
  id?: string;
  parent?: string;
  relationship?: "responsible" | "operator";
}

export interface OrganisationMismatchFinding extends FindingBase<"organisation_mismatch"> {
  /** The first organisation accepted. */
  expected: OrganisationExpectation;
  /** Every organisation accepted, when a policy accepts several (any one of them would do). */
  accepted?: OrganisationExpectation[];
  /** Absent when the record carries no organisation (not established). */
  actual?: RecordOrganisation;
}

export interface ContextMismatch {
  field: "environment" | "version";
  /** The value expected; several accepted environments are joined by " or "; a version range as written. */
  expected: string;
  /** Absent when the record does not state it: required state that is absent is not established (spec 3). */
  actual?: string;
  /** Set when the value is the matched binding's own context rather than the passport's state. */
  binding?: { class: string; value: string };
}

export interface EnvironmentOrVersionMismatchFinding extends FindingBase<"environment_or_version_mismatch"> {
  mismatches: ContextMismatch[];
}

export interface RequiredBinding {
  class: string;
  value?: string;
}

export interface BindingMismatchFinding extends FindingBase<"binding_mismatch"> {
  /** Required bindings the record does not carry. */
  missing: RequiredBinding[];
  /** What the record does bind in those classes (possibly nothing). */
  bound: RecordBinding[];
}

/** A binding that matches the target but is not proven: why it does not count. */
export interface UnverifiedBinding {
  class: string;
  value: string;
  /** The published state; `claimed` when the record carries none. A `verified` one past `fresh_until` is reported `lapsed`. */
  state: "claimed" | "lapsed" | "verified" | (string & {});
  problem: string;
  method?: string;
  fresh_until?: string;
  lapsed_at?: string;
}

export interface BindingUnverifiedFinding extends FindingBase<"binding_unverified"> {
  /** For each required binding the record carries without current proof of control. */
  unverified: UnverifiedBinding[];
}

/** Evidence for a required claim that was present but does not establish it. */
export interface UncountedEvidence {
  claim: string;
  evidence_id?: string;
  basis?: string;
  source?: string;
  scope?: string;
  /** `not_observed` (asserted by a member from a source the operator does not trust, or no basis), `out_of_scope`. */
  why: "not_observed" | "out_of_scope";
}

export interface MissingEvidenceFinding extends FindingBase<"missing_evidence"> {
  missing_claims: string[];
  /** Evidence for those claims that was present but does not count, and why. */
  not_counted: UncountedEvidence[];
}

/** Why a status token does not establish the current state (checkStatusToken in status.ts). */
export type StatusProblem =
  | "malformed"
  | "unknown_key"
  | "signature_invalid"
  | "other_identity"
  | "expired"
  | "too_old"
  | "not_yet_valid";

/**
 * Why the current-proof check at `higher` consequence failed (docs/verifier.md, Current proof):
 * no usable status token (`unavailable`, or the token's own problem), a token stating a newer
 * record than the one relied on (`record_superseded`), another record of the same or a newer
 * version (`record_mismatch`), or a newer committed version still being published
 * (`publication_pending`).
 */
export type CurrentProofProblem =
  | "unavailable"
  | StatusProblem
  | "record_superseded"
  | "record_mismatch"
  | "publication_pending";

export interface StaleItem {
  /**
   * `propagation`: two pieces of the service's proof disagree in a way that publication in progress
   * explains (one reached this location before the other, docs/freshness.md), so nothing is
   * established yet; `lagging` says which piece is behind.
   */
  what: "evidence" | "record" | "recheck_required" | "status" | "propagation";
  /** For `propagation`: the piece that has not caught up yet. */
  lagging?: "record" | "history" | "log";
  /** For `propagation`: the newer version the other piece shows, and when it was published. */
  newer_version?: number;
  published_at?: string;
  claim?: string;
  evidence_id?: string;
  /** Age in seconds; absent when the evidence carries no observation time. */
  age_seconds?: number;
  max_age_seconds?: number;
  /** Set when the evidence's own `fresh_until` has passed. */
  fresh_until?: string;
  /** `status` only: why the status token does not establish the record as current. */
  problem?: CurrentProofProblem;
  /** `status` only: the newest published version the token states. */
  current_version?: number;
  /** `status` only: the committed version still being published, and when it is retried. */
  pending_version?: number;
  next_attempt_at?: string;
  /** `status` and `propagation`: what went wrong, for a person. */
  detail?: string;
}

export interface StaleFinding extends FindingBase<"stale"> {
  stale: StaleItem[];
}

export interface StateNotOperativeFinding extends FindingBase<"state_not_operative"> {
  state: RecordState;
  problems: string[];
}

/** Why a record's signature or digest does not hold. */
export type SignatureProblem = "missing" | "malformed" | "mismatch" | "digest_mismatch" | "duplicate_member";

export interface SignatureInvalidFinding extends FindingBase<"signature_invalid"> {
  kind: SignatureProblem;
  /** The key id the signature names, when it could be read. */
  kid?: string;
  /** For `digest_mismatch`: the digest the record states and the one its content has. */
  stated_digest?: string;
  computed_digest?: string;
  /** For `duplicate_member`: the repeated name and where. */
  detail?: string;
}

export interface UnknownKeyFinding extends FindingBase<"unknown_key"> {
  /** The key id that signed it, which the configured key set does not list. */
  kid: string;
  trusted_kids: string[];
  /** What the unknown key signed: the record, or one history entry (`record_version` says which). */
  signed: "record" | "history_entry";
  record_version?: number;
}

/**
 * How the chain of published versions fails: `rollback` (the record is older than a version
 * already seen or published), `fork` (two different records for one version), `gap` (a version is
 * missing from the history, so the chain of previous digests breaks), `not_in_history` (the record's
 * version is not listed yet), `entry_signature_invalid` (a history entry's own signature fails).
 */
export type HistoryProblem = "rollback" | "fork" | "gap" | "not_in_history" | "entry_signature_invalid";

export interface HistoryBrokenFinding extends FindingBase<"history_broken"> {
  kind: HistoryProblem;
  /** The version at which the chain breaks. */
  at_version: number;
  /** What the chain needed there and what was found (digests), where that applies. */
  expected?: string;
  actual?: string;
  /** Where the contradiction comes from. */
  against: "published_history" | "seen_version";
  detail: string;
}

/** Why a checkpoint is not a checkpoint of the pinned log. */
export type CheckpointProblem =
  | "malformed"
  | "bad_signature"
  | "not_signed_by_log"
  | "wrong_origin"
  | "no_time"
  | "future_time";

interface LogFindingBase<K extends OutcomeClass> extends FindingBase<K> {
  /** The log's origin (the pinned key's name). */
  log: string;
}

export interface CheckpointInvalidFinding extends LogFindingBase<"checkpoint_invalid"> {
  kind: CheckpointProblem;
  detail: string;
}

export interface WitnessQuorumUnmetFinding extends LogFindingBase<"witness_quorum_unmet"> {
  required: number;
  /** Configured witnesses whose cosignature verified. */
  cosigners: string[];
}

/** The log offered a smaller tree than the checkpoint remembered. */
export interface RolledBackFinding extends LogFindingBase<"rolled_back"> {
  remembered_size: number;
  offered_size: number;
}

/** Two checkpoints of the same size with different roots: the log shows two histories. */
export interface SplitViewFinding extends LogFindingBase<"split_view"> {
  size: number;
  remembered_root: string;
  offered_root: string;
}

/** A larger tree that is not an extension of the remembered one (the consistency proof fails). */
export interface InconsistentFinding extends LogFindingBase<"inconsistent"> {
  remembered_size: number;
  offered_size: number;
}

/** A tile or entry bundle that does not belong to the signed tree. */
export interface LogTamperedFinding extends LogFindingBase<"log_tampered"> {
  /** The tile's path under `{resolver}/log/`. */
  tile: string;
  detail: string;
}

export interface CheckpointStaleFinding extends LogFindingBase<"checkpoint_stale"> {
  checkpoint: CheckpointView;
  max_age_seconds: number;
}

/**
 * The record's entry is not proved in the log: `no_index` (no `Passport-Log-Index`),
 * `beyond_checkpoint` (the index is not in the checkpoint yet), `not_included` (the log's entry at
 * that index is not this record; a tile that is not the signed tree's is `log_tampered` instead).
 */
export interface NotInLogFinding extends LogFindingBase<"not_in_log"> {
  kind: "no_index" | "beyond_checkpoint" | "not_included";
  index?: number;
  checkpoint_size?: number;
  detail: string;
}

/** The log holds a later version of this passport than the record served: a replay. */
export interface NotNewestFinding extends LogFindingBase<"not_newest"> {
  record_version: number;
  newer_version: number;
  newer_index: number;
  /** How the later entry was found: the resolver's `latest` hint, or reading the bundles after the record's entry. */
  via: "hint" | "scan";
  checkpoint: CheckpointView;
}

/** The record is included, but the bundles to read after it exceed the caller's bound. */
export interface NewestUnverifiedFinding extends LogFindingBase<"newest_unverified"> {
  kind: "scan_limit";
  index: number;
  bundles_needed: number;
  max_bundles: number;
  checkpoint: CheckpointView;
}

export type LogFinding =
  | CheckpointInvalidFinding
  | WitnessQuorumUnmetFinding
  | RolledBackFinding
  | SplitViewFinding
  | InconsistentFinding
  | LogTamperedFinding
  | CheckpointStaleFinding
  | NotInLogFinding
  | NotNewestFinding
  | NewestUnverifiedFinding;

/** A failed check on a resolved record. */
export type Finding =
  | LogFinding
  | SignatureInvalidFinding
  | UnknownKeyFinding
  | HistoryBrokenFinding
  | FamilyMismatchFinding
  | OrganisationMismatchFinding
  | EnvironmentOrVersionMismatchFinding
  | BindingMismatchFinding
  | BindingUnverifiedFinding
  | MissingEvidenceFinding
  | StaleFinding
  | StateNotOperativeFinding;

export interface FamilyMismatch extends FamilyMismatchFinding, Common<false> {}
export interface OrganisationMismatch extends OrganisationMismatchFinding, Common<false> {}
export interface EnvironmentOrVersionMismatch extends EnvironmentOrVersionMismatchFinding, Common<false> {}
export interface BindingMismatch extends BindingMismatchFinding, Common<false> {}
export interface BindingUnverified extends BindingUnverifiedFinding, Common<false> {}
export interface MissingEvidence extends MissingEvidenceFinding, Common<false> {}
export interface Stale extends StaleFinding, Common<false> {}
export interface StateNotOperative extends StateNotOperativeFinding, Common<false> {}
export interface SignatureInvalid extends SignatureInvalidFinding, Common<false> {}
export interface UnknownKey extends UnknownKeyFinding, Common<false> {}
export interface HistoryBroken extends HistoryBrokenFinding, Common<false> {}
export interface CheckpointInvalid extends CheckpointInvalidFinding, Common<false> {}
export interface WitnessQuorumUnmet extends WitnessQuorumUnmetFinding, Common<false> {}
export interface RolledBack extends RolledBackFinding, Common<false> {}
export interface SplitView extends SplitViewFinding, Common<false> {}
export interface Inconsistent extends InconsistentFinding, Common<false> {}
export interface LogTampered extends LogTamperedFinding, Common<false> {}
export interface CheckpointStale extends CheckpointStaleFinding, Common<false> {}
export interface NotInLog extends NotInLogFinding, Common<false> {}
export interface NotNewest extends NotNewestFinding, Common<false> {}
export interface NewestUnverified extends NewestUnverifiedFinding, Common<false> {}
/** The transparency-log failures (`log` option): like proof failures, the record's contents are not evaluated. */
export type LogFailure =
  | CheckpointInvalid
  | WitnessQuorumUnmet
  | RolledBack
  | SplitView
  | Inconsistent
  | LogTampered
  | CheckpointStale
  | NotInLog
  | NotNewest
  | NewestUnverified;
/** The proof failures: the record's contents are not evaluated, because they cannot be relied on. */
export type ProofFailure = SignatureInvalid | UnknownKey | HistoryBroken | LogFailure;

export type NetworkFailureKind = "timeout" | "network" | "server_error" | "unexpected_response" | "aborted";

export interface NetworkFailure extends FindingBase<"network_failure">, Common<false> {
  kind: NetworkFailureKind;
  attempts: number;
  status?: number;
  /** The problem `type` when the resolver answered with problem details. */
  problem_type?: string;
  detail: string;
  url: string;
}

/** The result of {@link Verifier.verify}: exactly one outcome class, never collapsed with another. */
export type VerifyOutcome =
  | Ok
  | OkSignatureSkipped
  | NotFound
  | MalformedId
  | FamilyMismatch
  | OrganisationMismatch
  | EnvironmentOrVersionMismatch
  | BindingMismatch
  | BindingUnverified
  | MissingEvidence
  | Stale
  | StateNotOperative
  | NetworkFailure
  | ProofFailure;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Fills the members every outcome carries. */
export function outcome<T extends VerifyOutcome>(
  body: DistributiveOmit<T, "ok" | "identity_is_not_authorization" | "authorization_note" | "findings"> & {
    findings?: Finding[];
  },
): T {
  return {
    findings: [],
    ...body,
    ok: body.outcome === "ok",
    identity_is_not_authorization: true,
    authorization_note: IDENTITY_IS_NOT_AUTHORIZATION,
  } as unknown as T;
}
