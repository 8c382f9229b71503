import { DECISIONS, OUTCOME_CLASSES, RECEIPT_CHECKS, RECEIPT_FORMAT, RECEIPT_VERSION } from "@passport/protocol";
import { z } from "zod";

/**
 * The decision receipt `Verifier.decide` and `Verifier.decideCall` return (docs/verifier.md,
 * Receipt): the shape of the verifier's `DecisionReceipt` type, so a consumer that logs receipts
 * can check them with the JSON Schema served at `/schemas/passport-decision-receipt.json`. The
 * verifier writes receipts by hand (no runtime dependencies); a test holds the two to one shape.
 */
const Timestamp = z.iso.datetime({ offset: false }).describe("RFC 3339 UTC timestamp");
const Digest = z.string().regex(/^sha-256:[A-Za-z0-9_-]{43}$/);

const ReceiptSide = z
  .strictObject({
    identity_id: z.string().describe("The identity id decided on, as it was asked for (even when malformed)"),
    record_version: z.int().min(1).optional(),
    digest: Digest.optional().describe("The record's digest, as signed"),
    kid: z.string().optional().describe("The key that signed the record"),
    log: z
      .strictObject({
        origin: z.string(),
        index: z.int().min(0),
        size: z.int().min(1),
        root_hash: z.string().describe("Base64 SHA-256 root hash of the signed checkpoint"),
      })
      .optional()
      .describe("The record's log entry and the signed checkpoint that included it"),
    status: z
      .strictObject({
        issued_at: Timestamp,
        kid: z.string().optional(),
        digest: Digest.describe("SHA-256 of the status token as received"),
      })
      .optional()
      .describe("The status token relied on at higher consequence"),
  })
  .describe("One side of a decision: the passport decided on, and the proof it rested on.");

export const DecisionReceipt = z.strictObject({
  receipt_format: z.literal(RECEIPT_FORMAT),
  version: z.literal(RECEIPT_VERSION),
  decided_at: Timestamp,
  action: z.string().describe("The policy action decided"),
  policy_digest: Digest.describe("The digest of the policy document (policyDigest)"),
  decision: z.enum(DECISIONS),
  outcome: z.enum(OUTCOME_CLASSES).describe("The outcome class of the pre-call check"),
  subject: ReceiptSide.describe("The passport decided on (the API for a consumer; the caller for a provider)"),
  caller: ReceiptSide.optional().describe("Reciprocal trust: the calling agent's side"),
  checks: z
    .array(
      z.strictObject({
        check: z.string().describe(`One of ${RECEIPT_CHECKS.join(", ")}, or a caller check (caller.*)`),
        result: z.enum(["passed", "failed", "not_checked"]),
        detail: z.string().optional().describe("The failing outcome, the authority result, the grant relied on"),
      }),
    )
    .describe("Each check, in order: passed, failed or not checked"),
});
export type DecisionReceipt = z.infer<typeof DecisionReceipt>;
