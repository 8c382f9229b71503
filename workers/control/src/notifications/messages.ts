import type { PublicationAnnounced } from "../publication/index.ts";
import type { EventKind } from "./kinds.ts";
import type { DeliveryRow, SubscriptionRow } from "./queries.ts";

/** What the control plane's notifications need beyond its bindings: the signing secret. */
export type NotificationEnv = Env & { NOTIFICATION_SIGNING_KEY?: string };

/** One delivery owed to one subscription; its state and attempts are in D1. */
export interface DeliveryDue {
  kind: "delivery";
  version: 1;
  delivery_id: string;
}

/** The messages of the notifications queue. */
export type NotificationMessage = PublicationAnnounced | DeliveryDue;

export function isNotificationMessage(body: unknown): body is NotificationMessage {
  const kind = (body as { kind?: unknown; version?: unknown } | null)?.kind;
  return (body as { version?: unknown }).version === 1 && (kind === "publication" || kind === "delivery");
}

/**
 * The body of a change notification (Standard Webhooks `{type, timestamp, data}`): which passport
 * changed to which version and digest, and what kinds of change. Never the record's content:
 * the receiver re-checks the passport with the verifier (`record_url`).
 */
export function changeNotification(delivery: DeliveryRow, resolverBaseUrl: string) {
  return {
    type: "passport.changed" as const,
    timestamp: delivery.publishedAt,
    data: {
      subscription_id: delivery.subscriptionId,
      identity_id: delivery.passportId,
      record_version: delivery.recordVersion,
      digest: delivery.digest,
      previous_digest: delivery.previousDigest,
      published_at: delivery.publishedAt,
      events: delivery.eventKinds as EventKind[],
      change_kinds: delivery.changeKinds,
      record_url: new URL(`/api/p/${encodeURIComponent(delivery.passportId)}.json`, resolverBaseUrl).href,
    },
  };
}

/**
 * The body of a challenge: the endpoint proves it wants these deliveries by answering 2xx with
 * `{"challenge": <the same value>}`. It names who subscribes and to what, so a receiver can
 * accept only the subscribers it expects.
 */
export function challengeMessage(
  subscription: Pick<SubscriptionRow, "id" | "subscriber" | "endpointUrl" | "targetKind" | "targetId" | "eventKinds">,
  challenge: string,
  at: Date,
) {
  return {
    type: "subscription.challenge" as const,
    timestamp: at.toISOString(),
    data: {
      challenge,
      subscription_id: subscription.id,
      subscriber: subscription.subscriber,
      endpoint_url: subscription.endpointUrl,
      target: { kind: subscription.targetKind, id: subscription.targetId },
      events: subscription.eventKinds,
    },
  };
}
