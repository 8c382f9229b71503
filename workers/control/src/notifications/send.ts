import { outboundFor } from "../outbound/config.ts";
import { type FetchFailure, type Posted, postBody } from "../outbound/fetch.ts";
import type { NotificationEnv } from "./messages.ts";
import { signWebhook } from "./signing.ts";

/** What one post to an endpoint came to, for the attempts log. */
export type Sent = (Posted | FetchFailure) & { durationMs: number };

/**
 * Signs `message` (Standard Webhooks headers, this attempt's timestamp) and posts it to `endpoint`
 * through the outbound adapter: the same address rules, timeout and size cap as every other
 * fetch of a URL a caller named, never a redirect followed, no credential of ours sent.
 */
export async function sendSigned(env: NotificationEnv, endpoint: string, id: string, message: unknown): Promise<Sent> {
  const { transport, policy } = outboundFor(env);
  const body = JSON.stringify(message);
  const started = Date.now();
  let target: URL;
  try {
    target = new URL(endpoint);
  } catch {
    return { ok: false, reason: "not a valid URL", durationMs: 0 };
  }
  const headers = await signWebhook(env.NOTIFICATION_SIGNING_KEY, id, body, new Date());
  const answer = await postBody(transport, policy, target, body, {
    ...headers,
    "content-type": "application/json",
    "user-agent": "passport-service-notifications",
  });
  return { ...answer, durationMs: Date.now() - started };
}

/** Whether an answer counts as received (any 2xx). */
export const received = (sent: Sent): boolean => sent.ok && sent.status >= 200 && sent.status < 300;
