import { bySubject, limitRequests, POST, RATE_LIMIT_PERIOD_SECONDS, RETRY_DETAIL } from "../api/rate-limit.ts";
import { Refusal } from "../failures.ts";

/** Subscriptions one subscriber may hold: enough for an organisation's consumers, bounded per subject. */
export const MAX_SUBSCRIPTIONS_PER_SUBSCRIBER = 100;

/**
 * Subscriptions all subscribers together may point at one endpoint host: the fan-out of one
 * publication to one host is bounded, whoever subscribed it.
 */
export const MAX_SUBSCRIPTIONS_PER_ENDPOINT_HOST = 200;

/**
 * `POST /v1/notifications/subscriptions` per authenticated subject: every creation posts a
 * challenge to a host the caller names. Mount it after authentication.
 */
export const limitSubscribing = limitRequests(POST, [{ limiter: "SUBSCRIBE_PER_SUBJECT", key: bySubject }]);

/**
 * Charges one challenge to `host`, whoever asks: many subjects together cannot turn the
 * challenges into a flood against one host. Raised as a refusal so the route stays one flow.
 */
export async function chargeEndpointHost(env: Env, host: string): Promise<void> {
  const { success } = await env.SUBSCRIBE_PER_ENDPOINT.limit({ key: `host:${host}` });
  if (!success) {
    console.warn(JSON.stringify({ level: "warn", event: "rate_limited", limiter: "SUBSCRIBE_PER_ENDPOINT" }));
    throw new Refusal("rate-limited", { detail: RETRY_DETAIL }, { retryAfterSeconds: RATE_LIMIT_PERIOD_SECONDS });
  }
}
