/**
 * The decision receipt's vocabulary (docs/verifier.md, Receipt): its format name and version, and
 * the checks it lists. The verifier writes and checks receipts; the domain's schema describes them.
 */
export const RECEIPT_FORMAT = "svc.passport_decision";
export const RECEIPT_VERSION = 1;

/** The checks a receipt lists, in this order. */
export const RECEIPT_CHECKS = [
  "record",
  "signature",
  "history",
  "log",
  "status",
  "family",
  "organisation",
  "state",
  "environment",
  "version",
  "bindings",
  "evidence",
  "freshness",
  "authority",
] as const;
export type ReceiptCheckName = (typeof RECEIPT_CHECKS)[number];
