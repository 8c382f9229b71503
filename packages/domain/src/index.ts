// The protocol's identity ids, signature encodings and status token type, for the Workers, which
// take their shared vocabulary from the domain (@passport/protocol defines them).
export {
  canonicalBytes,
  canonicalDigest,
  describeIdentityIdDefect,
  IDENTITY_ID_ALPHABET,
  IDENTITY_ID_LENGTH,
  type IdentityIdDefect,
  identityIdDefect,
  isIdentityId,
  mintIdentityId,
  SIGNATURE_TYPE,
  STATUS_TOKEN_TYPE,
} from "@passport/protocol";
export * from "./canonical-url.ts";
export * from "./credentials.ts";
export * from "./development.js";
export * from "./display-text.ts";
export * from "./encoding.ts";
export * from "./envelope.ts";
export * from "./envelope-schema.ts";
export * from "./evidence-attestation.ts";
export * from "./evidence-source.ts";
export * from "./history.ts";
export * from "./json-schema.ts";
export * from "./labels.ts";
export * from "./lifecycle.ts";
export * from "./lookalike-host.ts";
export * from "./policy.ts";
export * from "./problems.ts";
export * from "./projection.ts";
export * from "./receipt.ts";
export * from "./record.ts";
export * from "./resolver-admin.ts";
export * from "./rpc-outcome.ts";
export * from "./seal.ts";
export * from "./signature-agent-card.ts";
export * from "./signature-agent-card-schema.ts";
export * from "./status.ts";
export * from "./storage-keys.ts";
export * from "./web-bot-auth-card-schema.ts";
