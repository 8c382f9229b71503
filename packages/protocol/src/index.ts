// @passport/protocol: the formats every part of the service shares, with no runtime dependencies.
// Identity ids, RFC 8785 canonical JSON and SHA-256, the strict JSON reader, detached JWS, the
// transparency log's format (./log/index.ts), and the outcome, decision, receipt and envelope
// vocabularies. docs/packages.md says what belongs here and what does not.
export {
  canonicalBytes,
  canonicalJson,
  canonicalMembers,
  joinMembers,
  withMember,
} from "./canonical.ts";
export {
  AUTHORITY_OUTCOMES,
  type AuthorityOutcome,
  DECISIONS,
  type Decision,
  POLICY_FORMAT,
  POLICY_LIMITS,
  POLICY_VERSION,
  type PolicyOutcome,
} from "./decision.ts";
export {
  ENVELOPE_ACTION_KINDS,
  ENVELOPE_ASSURANCES,
  ENVELOPE_TYPE,
  ENVELOPE_VERSION,
  RECOMMENDED_PATHS,
  type RecommendedPath,
} from "./envelope.ts";
export {
  describeIdentityIdDefect,
  IDENTITY_ID_ALPHABET,
  IDENTITY_ID_LENGTH,
  type IdentityIdDefect,
  identityIdDefect,
  isIdentityId,
  mintIdentityId,
} from "./identity-id.ts";
export {
  base64urlDecode,
  base64urlEncode,
  canonicalDigest,
  digestOfCanonical,
  type KeyLookup,
  SIGNATURE_TYPE,
  type SignatureCheck,
  STATUS_TOKEN_TYPE,
  verifyDetachedJws,
  verifyDetachedJwsOver,
} from "./jws.ts";
export * from "./log/index.ts";
export { type NextStep, OUTCOME_CLASSES, OUTCOME_KINDS, type OutcomeClass, type OutcomeKind } from "./outcome.ts";
export { RECEIPT_CHECKS, RECEIPT_FORMAT, RECEIPT_VERSION, type ReceiptCheckName } from "./receipt.ts";
export { VERSIONS_PATTERN, validVersions, versionSatisfies } from "./semver.ts";
export { sha256 } from "./sha256.ts";
export { type StrictJsonProblem, strictJsonParse } from "./strict-json.ts";
