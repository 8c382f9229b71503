export {
  AUTHORITY_OUTCOMES,
  type AuthorityOutcome,
  base64urlDecode,
  base64urlEncode,
  canonicalDigest,
  canonicalJson,
  DECISIONS,
  type Decision,
  describeIdentityIdDefect,
  type IdentityIdDefect,
  identityIdDefect,
  type NextStep,
  OUTCOME_CLASSES,
  OUTCOME_KINDS,
  type OutcomeClass,
  type OutcomeKind,
  POLICY_FORMAT,
  POLICY_LIMITS,
  type PolicyOutcome,
  RECEIPT_CHECKS,
  RECEIPT_FORMAT,
  type ReceiptCheckName,
  type SignatureCheck,
  STATUS_TOKEN_TYPE,
  VERSIONS_PATTERN,
  verifyDetachedJws,
  versionSatisfies,
} from "@passport/protocol";
export {
  type AgentCardCheck,
  type AgentCardFetch,
  type AgentCardOptions,
  type AgentCardProblem,
  type AgentCardSignature,
  agentCardPayload,
  fetchAgentCard,
  type ProvenCardSignature,
  verifyAgentCard,
} from "./a2a-card.ts";
export { type AuthorityCheck, type AuthorityResult, evaluateAuthority } from "./authority.ts";
export { type CacheEntry, copyAge, isFresh, RecordCache, type RecordCacheStore } from "./cache.ts";
export {
  type CallerSignatureCheck,
  type CallerSignatureProblem,
  type CallerSignatureRefusal,
  type CallerSignatures,
  DEFAULT_SIGNATURE_WINDOW_SECONDS,
  PASSPORT_AGENT_HEADER,
  type ProvenKey,
  provenKeys,
  SIGNING_KEYS_CLASS,
} from "./caller.ts";
export { evaluate, formatAge } from "./checks.ts";
export type { DecideRequest, DecisionResult } from "./decide.ts";
export type { CallDecisionResult, CallerOutcome, DecideCallRequest } from "./decide-call.ts";
export { type AgentActionEnvelope, type EnvelopeResult, envelopeProblem, fetchEnvelope } from "./envelope.ts";
export {
  CONSEQUENCES,
  type Consequence,
  type Duration,
  durationSeconds,
  type EvidenceRequirement,
  type Expectation,
  type SuppliedRecord,
} from "./expectation.ts";
export { fetchHistory, type HistoryAnswer } from "./history.ts";
export { cacheDirectives, type FetchLike, readCappedBytes } from "./http.ts";
export { type JwkSet, KeyRing, type PublicJwk } from "./keys.ts";
export { type AuditMismatch, type AuditReport, auditLog } from "./log/audit.ts";
export { DEFAULT_MAX_BUNDLES, type LogOptions } from "./log/check.ts";
export { type CheckpointStore, MemoryCheckpointStore, type StoredCheckpoint } from "./log/checkpoint.ts";
export { LogClient, TileCache } from "./log/client.ts";
export {
  type Invalidates,
  MemoryNotificationIds,
  NOTIFICATION_TOLERANCE_SECONDS,
  type NotificationCheck,
  type NotificationIdStore,
  type NotificationOptions,
  type NotifiedVersion,
  type ReceiverOptions,
  receiveNotification,
  verifyNotification,
} from "./notification.ts";
export * from "./outcome.ts";
export {
  type ActionPolicy,
  actionPolicyFor,
  type CallerPolicy,
  type ClaimRequirement,
  type GrantRelationship,
  loadPolicy,
  type PolicyDocument,
  PolicyError,
  policyDigest,
  type RequiredAuthority,
} from "./policy.ts";
export {
  checkHistory,
  checkRecordProof,
  compareWithSeen,
  type HistoryEntryView,
  type ProofCheck,
  type ProofFinding,
} from "./proof.ts";
export { PROPAGATION_WINDOW_SECONDS } from "./propagation.ts";
export {
  type DecisionReceipt,
  type ReceiptCheck,
  type ReceiptCheckResult,
  type ReceiptSide,
  receiptSide,
  type VerifyReceiptOptions,
  verifyReceipt,
} from "./receipt.ts";
export type * from "./record.ts";
export { isStructuredAuthority, type PassportRecordView, parseRecord } from "./record.ts";
export {
  checkStatusToken,
  STATUS_HEADER,
  type StatusCheck,
  type StatusClaims,
  type StatusProblem,
  statusPath,
} from "./status.ts";
export { coveredBy, redactUrl, sameBindingValue } from "./url-match.ts";
export {
  type Resolved,
  type ResolveOptions,
  type ResolveResult,
  Verifier,
  type VerifierOptions,
} from "./verifier.ts";

import type { Expectation } from "./expectation.ts";
import type { VerifyOutcome } from "./outcome.ts";
import { type ResolveOptions, type ResolveResult, Verifier, type VerifierOptions } from "./verifier.ts";

/**
 * One-off resolution without a shared cache; use a {@link Verifier} to reuse answers.
 * @example
 * const result = await resolve("psp_k03khmq2ren546nj2zrpdtsmdz", { resolver: "https://resolver.example" });
 */
export function resolve(identityId: string, options: VerifierOptions & ResolveOptions): Promise<ResolveResult> {
  return new Verifier({ ...options, cache: false }).resolve(identityId, options);
}

/**
 * One-off pre-call check without a shared cache; use a {@link Verifier} to reuse answers.
 * @example
 * const result = await verify(id, { family: "api", baseUrl: "https://api.example/v1" }, { resolver: "https://resolver.example" });
 * if (!result.ok) deny(result.next_step, result.reason);
 */
export function verify(identityId: string, expectation: Expectation, options: VerifierOptions): Promise<VerifyOutcome> {
  return new Verifier({ ...options, cache: false }).verify(identityId, expectation);
}
