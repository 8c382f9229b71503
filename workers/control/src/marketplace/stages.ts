/**
 * The acquisition's stages, in the order they are run (spec 3 "acquisition progression", 4.3).
 * Product mapping runs before account set-up, unlike the spec's list: it is a pure lookup, and
 * failing it first means an unknown product code creates nothing (docs/acquisition.md).
 */
export const STAGES = [
  "registration_token_handoff",
  "customer_identification",
  "activation",
  "product_mapping",
  "account",
  "passport",
  "publication",
  "claim",
] as const;
export type Stage = (typeof STAGES)[number];

export const STAGE_LABELS: Record<Stage, string> = {
  registration_token_handoff: "Registration-token handoff",
  customer_identification: "Customer identification",
  activation: "Acquisition activation (entitlement)",
  product_mapping: "Product code mapping",
  account: "Account and parent organisation",
  passport: "API passport issue or reuse",
  publication: "Publication to the Resolver",
  claim: "Dashboard claim",
};

const SUPPORT =
  "Contact support with the details below (acquisition id, stage, time, cloud account and product); never send the registration token.";

/** What the customer is told for each failure, by marketplace error type or our own code. */
const VISIBLE: Record<string, string> = {
  InvalidTokenException: `The marketplace did not accept the registration token. ${SUPPORT}`,
  ExpiredTokenException: `The registration token expired before set-up could use it. ${SUPPORT}`,
  DisabledApiException: `The marketplace's customer-resolution API is disabled in the Region we call; this is on our side. ${SUPPORT}`,
  ThrottlingException: "The marketplace is throttling requests; set-up is retried automatically.",
  InternalServiceErrorException: "The marketplace reported an internal error; set-up is retried automatically.",
  NetworkError: "The marketplace could not be reached; set-up is retried automatically.",
  NotEntitled: `The marketplace reports no current entitlement for this subscription. Check the subscription in the marketplace; if it is active, ${SUPPORT.charAt(0).toLowerCase()}${SUPPORT.slice(1)}`,
  UnknownProductCode: `This marketplace product is not mapped to a passport family here. ${SUPPORT}`,
  ChargedOffer: `The API passport is free of charge and is acquired only through its zero-charge listing; nothing was set up. Cancel this subscription in the marketplace and subscribe to the free listing; if you believe it is the free listing, ${SUPPORT.charAt(0).toLowerCase()}${SUPPORT.slice(1)}`,
  TokenUnreadable: `The handoff could not be read back (a key changed while it was queued). ${SUPPORT}`,
  RetriesExhausted: `Set-up kept failing and was stopped; nothing was duplicated. ${SUPPORT}`,
};

export function visibleError(code: string, fallback?: string): string {
  return VISIBLE[code] ?? fallback ?? `Set-up failed at this stage. ${SUPPORT}`;
}

/**
 * What the customer should do next, from the acquisition's state. A failed stage always means
 * support (spec 7: customer resolution or activation fails, contact support with cloud-account
 * context and the failed stage; never retry by creating new identities).
 */
export function nextStep(status: string): "claim" | "wait" | "contact_support" {
  if (status === "completed") return "claim";
  return status === "failed" ? "contact_support" : "wait";
}
