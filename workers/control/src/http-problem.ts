import { type Problem, type ProblemKind, problem } from "@passport/domain";

/** The one error type handlers throw; the app's onError turns it into problem+json. */
export class HttpProblem extends Error {
  readonly body: Problem;
  readonly headers: Record<string, string>;

  constructor(kind: ProblemKind, extra: Omit<Partial<Problem>, "type" | "status"> = {}, headers = {}) {
    const body = problem(kind, extra);
    super(body.detail ?? body.title);
    this.body = body;
    this.headers = headers;
  }
}
