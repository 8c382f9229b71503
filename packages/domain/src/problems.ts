/**
 * RFC 9457 problem types. The `type` URIs are part of the public contract: never rename one.
 * Each is documented in docs/problems.md.
 */
export const PROBLEM_TYPE_BASE = "urn:svc:passport:problem:";

export const PROBLEMS = {
  "malformed-identity-id": { status: 400, title: "Malformed identity id" },
  "invalid-envelope-target": { status: 400, title: "Invalid envelope target" },
  "identity-not-found": { status: 404, title: "Identity not found" },
  "route-not-found": { status: 404, title: "No such route" },
  "log-not-found": { status: 404, title: "Not in the transparency log" },
  "no-signature-agent-card": { status: 404, title: "This passport has no Signature Agent Card" },
  "method-not-allowed": { status: 405, title: "Method not allowed" },
  unauthenticated: { status: 401, title: "Authentication required" },
  forbidden: { status: 403, title: "Not permitted for your role" },
  "invalid-request": { status: 400, title: "Invalid request" },
  "unsupported-media-type": { status: 415, title: "Unsupported media type" },
  "payload-too-large": { status: 413, title: "Payload too large" },
  "duplicate-identity": { status: 409, title: "A passport for this object already exists" },
  "binding-exists": { status: 409, title: "The passport already has this binding" },
  "link-exists": { status: 409, title: "The passport already declares this uses link" },
  "attestation-invalid": { status: 400, title: "Evidence attestation missing or invalid" },
  "invalid-transition": { status: 409, title: "Lifecycle transition not allowed" },
  "recheck-pending": { status: 409, title: "The re-check flag clears itself once the checks pass" },
  "precondition-failed": { status: 412, title: "The passport changed since you read it" },
  "precondition-required": { status: 428, title: "If-Match is required" },
  "invalid-registration-token": { status: 400, title: "Missing or malformed marketplace registration token" },
  "acquisition-not-found": { status: 404, title: "No such acquisition" },
  "acquisition-not-ready": { status: 409, title: "The acquisition has not completed" },
  "claim-reference-invalid": { status: 403, title: "Claim reference wrong, expired or already used" },
  "organisation-already-linked": {
    status: 409,
    title: "The organisation already holds another cloud account's marketplace subscriptions",
  },
  "passport-choice-required": {
    status: 409,
    title: "The organisation has several passports of this family to adopt; choose one",
  },
  "passport-not-adoptable": {
    status: 409,
    title: "The chosen passport is not an adoptable passport of this family in the organisation",
  },
  "subscription-not-found": { status: 404, title: "No such notification subscription" },
  "subscription-limit-reached": { status: 409, title: "Notification subscription limit reached" },
  "endpoint-not-confirmed": { status: 422, title: "The endpoint did not echo the challenge" },
  "rate-limited": { status: 429, title: "Too many requests" },
  unavailable: { status: 503, title: "Temporarily unavailable" },
  "organisation-moving": { status: 503, title: "The organisation is moving to another shard" },
  "crosses-shards": { status: 409, title: "The change joins organisations kept in different shards" },
  "storage-full": { status: 507, title: "The service's storage is full" },
  internal: { status: 500, title: "Internal error" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemKind = keyof typeof PROBLEMS;

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  [extension: string]: unknown;
}

/**
 * Builds a problem details object of a known kind.
 * @example
 * problem("identity-not-found", { detail: "No passport has this id." });
 */
export function problem(kind: ProblemKind, extra: Omit<Partial<Problem>, "type" | "status"> = {}): Problem {
  const { status, title } = PROBLEMS[kind];
  return { type: PROBLEM_TYPE_BASE + kind, title, status, ...extra };
}

/** Serialises a problem as an `application/problem+json` response. */
export function problemResponse(body: Problem, headers: HeadersInit = {}): Response {
  const response = new Response(JSON.stringify(body), { status: body.status, headers });
  response.headers.set("content-type", "application/problem+json");
  return response;
}
