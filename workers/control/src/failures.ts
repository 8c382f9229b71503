import type { Problem, ProblemKind } from "@passport/domain";

/** What a refusal says beyond its kind: the problem's detail, field errors and extension members. */
export type RefusalDetails = Omit<Partial<Problem>, "type" | "status" | "title">;

/** What the caller may do next, beyond reading the detail. */
export interface RefusalHints {
  /** The realm whose bearer credential would be accepted (a refused authentication). */
  challengeRealm?: string;
  /** Seconds after which the same request may succeed (work still under way, a rate limit). */
  retryAfterSeconds?: number;
}

/**
 * The one failure the control plane's rules raise when they refuse a request: the problem kind
 * that names why (`@passport/domain`'s stable `type` vocabulary), and what the caller is told.
 * Rules know nothing of HTTP; `api/problem.ts` is the one place that turns a refusal into its
 * RFC 9457 answer (status, body and headers), for the app's `onError` and the batch's items.
 */
export class Refusal extends Error {
  constructor(
    readonly kind: ProblemKind,
    readonly details: RefusalDetails = {},
    readonly hints: RefusalHints = {},
  ) {
    super(typeof details.detail === "string" ? details.detail : kind);
    this.name = "Refusal";
  }
}

/**
 * A change refused because the passport is not at the version the caller read (`If-Match`), or
 * moved on while the change was applied: 412, naming the current version when it is known.
 */
export class StaleVersion extends Refusal {
  constructor(
    message: string,
    readonly current?: number,
  ) {
    super("precondition-failed", { detail: message });
    this.name = "StaleVersion";
  }
}
