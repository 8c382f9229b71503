import { type Problem, type ProblemKind, problem, problemResponse } from "@passport/domain";
import { HTTPException } from "hono/http-exception";

/**
 * The one error type handlers throw. It is a Hono `HTTPException`, so Hono and any middleware
 * that catches those see the right status; `getResponse` is our problem+json document.
 */
export class HttpProblem extends HTTPException {
  readonly body: Problem;
  readonly headers: Record<string, string>;

  constructor(kind: ProblemKind, extra: Omit<Partial<Problem>, "type" | "status"> = {}, headers = {}) {
    const body = problem(kind, extra);
    super(body.status as ConstructorParameters<typeof HTTPException>[0], { message: body.detail ?? body.title });
    this.body = body;
    this.headers = headers;
  }

  override getResponse(): Response {
    return problemResponse(this.body, this.headers);
  }
}

/** The problem kind for a status a Hono built-in refused with. */
const KIND_BY_STATUS: Partial<Record<number, ProblemKind>> = {
  400: "invalid-request",
  401: "unauthenticated",
  403: "forbidden",
  404: "route-not-found",
  405: "method-not-allowed",
  413: "payload-too-large",
  415: "unsupported-media-type",
};

/**
 * A problem document for any `HTTPException`: ours as they are; a built-in middleware's refusal
 * (body limit, CSRF origin check, ...) as the problem of its status, never a 500. Its message is
 * Hono's own fixed text, so no internals leak.
 */
export function problemFromHttpException(error: HTTPException): Response {
  if (error instanceof HttpProblem) return error.getResponse();
  const kind = KIND_BY_STATUS[error.status] ?? (error.status >= 500 ? "internal" : "invalid-request");
  return problemResponse(problem(kind, error.message ? { detail: error.message } : {}));
}
