import type { Context } from "hono";
import {
  byClient,
  bySubject,
  limitRequests,
  POST,
  RATE_LIMIT_PERIOD_SECONDS,
  RETRY_DETAIL,
} from "../api/rate-limit.ts";
import type { AppEnv } from "../context.ts";
import { handoffErrorResponse } from "./handoff-error.ts";

/**
 * The set-up form post's refusal: the marketplace sends the buyer's browser there, so a browser
 * gets the same page as any other handoff that could not start (stage, time, next step), and
 * anything else the problem document; both with `Retry-After`.
 */
async function refusedHandoff(c: Context<AppEnv>): Promise<Response> {
  const response = await handoffErrorResponse(c.req.header("accept") ?? null, {
    kind: "rate-limited",
    detail: RETRY_DETAIL,
    stage: "registration_token_handoff",
    occurredAt: new Date().toISOString(),
    next: "retry",
  });
  response.headers.set("retry-after", String(RATE_LIMIT_PERIOD_SECONDS));
  return response;
}

/**
 * `POST /marketplace/fulfill`: each accepted post costs a queue message and a ResolveCustomer call
 * on the seller's credentials, so one client is limited, and all clients together are held under
 * a ceiling that keeps the seller's marketplace quota for real buyers (docs/limits.md).
 * @example
 * marketplace.use("/fulfill", limitFulfill);
 */
export const limitFulfill = limitRequests(
  POST,
  [
    { limiter: "FULFILL_PER_CLIENT", key: byClient },
    { limiter: "FULFILL_CEILING", key: () => "all" },
  ],
  refusedHandoff,
);

/** `POST /marketplace/events`, per client: it also slows guessing of the events secret. */
export const limitEvents = limitRequests(POST, [{ limiter: "EVENTS_PER_CLIENT", key: byClient }]);

/** `POST /v1/acquisitions/{id}/claim`, per authenticated subject; mount it after authentication. */
export const limitClaims = limitRequests(POST, [{ limiter: "CLAIMS_PER_SUBJECT", key: bySubject }]);
