import { requireMembership } from "../access/membership.ts";
import { type Database, randomId } from "../db/client.ts";
import { type Shards, shardsOf } from "../db/shards.ts";
import { Refusal } from "../failures.ts";
import { outboundFor } from "../outbound/config.ts";
import { refusal } from "../outbound/fetch.ts";
import type { EventKind } from "./kinds.ts";
import { MAX_SUBSCRIPTIONS_PER_ENDPOINT_HOST, MAX_SUBSCRIPTIONS_PER_SUBSCRIBER } from "./limits.ts";
import { challengeMessage, type NotificationEnv } from "./messages.ts";
import {
  insertSubscription,
  organisationOfPassport,
  type SubscriptionRow,
  sameSubscription,
  subscriptionCounts,
} from "./queries.ts";
import { received, sendSigned } from "./send.ts";

/** A subscription as asked for, validated by its schema. */
export interface Wanted {
  endpointUrl: string;
  target: { kind: "passport" | "organisation"; id: string };
  events: EventKind[];
}

/**
 * The endpoint's URL when the service may post to it: the outbound adapter's rules (https on the
 * default port, a public DNS name, not the service's own hosts, no user information).
 */
export function endpointOf(env: Env, endpointUrl: string): URL {
  let url: URL;
  try {
    url = new URL(endpointUrl);
  } catch {
    throw invalidEndpoint("is not a URL");
  }
  const refused = refusal(url, outboundFor(env).policy);
  if (refused) throw invalidEndpoint(refused);
  if (url.hash) throw invalidEndpoint("has a fragment, which is never sent");
  return url;
}

const invalidEndpoint = (why: string) =>
  new Refusal("invalid-request", {
    detail: `endpoint_url ${why}.`,
    errors: [{ path: "endpoint_url", message: why }],
  });

/**
 * Who may follow what: any passport that exists (records are public), and the passports of an
 * organisation only for its members (an organisation one does not belong to is not found). Each
 * is read in the shard that holds it; the subscription itself is shard 0's.
 */
async function checkTarget(shards: Shards, subscriber: string, target: Wanted["target"]): Promise<void> {
  if (target.kind === "organisation") {
    await requireMembership(await shards.readOrganisation(target.id), subscriber, target.id, "viewer");
    return;
  }
  if ((await organisationOfPassport(await shards.readIdentity(target.id), target.id)) === undefined) {
    throw new Refusal("identity-not-found", { detail: `No passport ${target.id}.` });
  }
}

/** Refuses a subscription past the subscriber's cap or past the endpoint host's (all subscribers together). */
async function checkCaps(db: Database, subscriber: string, host: string): Promise<void> {
  const { bySubscriber, byEndpoint } = await subscriptionCounts(db, subscriber, host);
  if (bySubscriber >= MAX_SUBSCRIPTIONS_PER_SUBSCRIBER) {
    throw new Refusal("subscription-limit-reached", {
      detail: `You hold ${bySubscriber} subscriptions, the most one subscriber may hold; delete one first.`,
      limit: MAX_SUBSCRIPTIONS_PER_SUBSCRIBER,
    });
  }
  if (byEndpoint >= MAX_SUBSCRIPTIONS_PER_ENDPOINT_HOST) {
    throw new Refusal("subscription-limit-reached", {
      detail: `${host} already receives ${byEndpoint} subscriptions, the most one endpoint host may receive.`,
      limit: MAX_SUBSCRIPTIONS_PER_ENDPOINT_HOST,
    });
  }
}

/** A fresh challenge: 32 random bytes, base64url. */
function newChallenge(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/**
 * Sends the challenge and refuses unless the endpoint answered 2xx with `{"challenge": …}` naming
 * the same value. The caller never sees the challenge, so only a receiver that wants these
 * deliveries can confirm: a subscriber cannot subscribe someone else's endpoint.
 */
async function confirmEndpoint(env: NotificationEnv, pending: Omit<SubscriptionRow, "createdAt" | "confirmedAt">) {
  const challenge = newChallenge();
  const at = new Date();
  const sent = await sendSigned(env, pending.endpointUrl, randomId("chl"), challengeMessage(pending, challenge, at));
  const refuse = (what: string) =>
    new Refusal("endpoint-not-confirmed", {
      detail: `${pending.endpointUrl} ${what}; nothing was subscribed. The endpoint must answer the challenge with 2xx and {"challenge": "<the value sent>"} (docs/events.md).`,
    });
  if (!sent.ok) throw refuse(`could not be asked (${sent.reason})`);
  if (!received(sent)) throw refuse(`answered the challenge with HTTP ${sent.status}`);
  let echoed: unknown;
  try {
    echoed = (JSON.parse(sent.body) as { challenge?: unknown } | null)?.challenge;
  } catch {
    echoed = undefined;
  }
  if (echoed !== challenge) throw refuse("did not echo the challenge");
}

/**
 * Subscribes `subscriber`'s endpoint to a target: the same subscription again answers the one it
 * has (`created: false`, no challenge sent); a new one must be allowed, within the caps, and
 * confirmed by the endpoint before it is stored.
 */
export async function subscribe(
  env: NotificationEnv,
  db: Database,
  subscriber: string,
  wanted: Wanted,
): Promise<{ subscription: SubscriptionRow; created: boolean }> {
  if (!env.NOTIFICATION_SIGNING_KEY) {
    // Nothing could be signed, not even the challenge: a deployment without the key (docs/deploy.md).
    throw new Refusal(
      "unavailable",
      { detail: "Change notifications are not configured on this service yet." },
      { retryAfterSeconds: 3600 },
    );
  }
  const endpoint = endpointOf(env, wanted.endpointUrl);
  await checkTarget(shardsOf(env), subscriber, wanted.target);
  const key = { subscriber, endpointUrl: endpoint.href, targetKind: wanted.target.kind, targetId: wanted.target.id };
  const existing = await sameSubscription(db, key);
  if (existing) return { subscription: existing, created: false };
  await checkCaps(db, subscriber, endpoint.hostname);
  const pending = { ...key, id: randomId("sub"), endpointHost: endpoint.hostname, eventKinds: wanted.events };
  await confirmEndpoint(env, pending);
  const subscription = await insertSubscription(db, { ...pending, confirmedAt: new Date().toISOString() });
  return { subscription, created: subscription.id === pending.id };
}
