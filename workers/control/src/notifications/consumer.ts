import type { Database } from "../db/client.ts";
import { type Shards, shardsOf } from "../db/shards.ts";
import type { PublicationAnnounced } from "../publication/index.ts";
import { eventKindsOf, wantedKinds } from "./kinds.ts";
import { changeNotification, type DeliveryDue, isNotificationMessage, type NotificationEnv } from "./messages.ts";
import {
  deliveryToSend,
  insertDeliveries,
  type NewDelivery,
  publicationFacts,
  recordAttempt,
  subscriptionsTo,
} from "./queries.ts";
import { retryDelay } from "./retries.ts";
import { received, sendSigned } from "./send.ts";

/**
 * The delivery id (`webhook-id`) of a publication for a subscription: derived, so a fan-out that
 * runs again records and sends the same delivery rather than a second one.
 */
async function deliveryId(subscriptionId: string, passportId: string, recordVersion: number): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`${subscriptionId}\n${passportId}\n${recordVersion}`),
  );
  const hex = [...new Uint8Array(digest).slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `msg_${hex}`;
}

/**
 * Fans a publication out: one delivery for each subscription to the passport or its organisation,
 * confirmed before the publication, that asked for a kind the publication matches, recorded in D1
 * and then queued on its own, so each endpoint is retried alone. The passport is read in its shard;
 * subscriptions and deliveries are service-wide, in shard 0 (docs/sharding.md).
 */
async function fanOut(env: NotificationEnv, shards: Shards, publication: PublicationAnnounced): Promise<true> {
  const passportShard = await shards.readIdentity(publication.passport_id);
  const { organisationId, keysChanged } = await publicationFacts(
    passportShard,
    publication.passport_id,
    publication.record_version,
  );
  const db = shards.shard(0);
  const subscriptions = await subscriptionsTo(db, publication.passport_id, organisationId);
  const matched = eventKindsOf(publication.change_kinds, keysChanged);
  const rows: NewDelivery[] = [];
  for (const subscription of subscriptions) {
    // A subscription is told of what is published after it was confirmed, not of what it missed
    // before (a fan-out that ran late would otherwise send it an older version first).
    if (subscription.confirmedAt > publication.published_at) continue;
    const kinds = wantedKinds(subscription.eventKinds, matched);
    if (kinds.length === 0) continue;
    rows.push({
      id: await deliveryId(subscription.id, publication.passport_id, publication.record_version),
      subscriptionId: subscription.id,
      passportId: publication.passport_id,
      recordVersion: publication.record_version,
      digest: publication.digest,
      previousDigest: publication.previous_digest,
      publishedAt: publication.published_at,
      changeKinds: publication.change_kinds,
      eventKinds: kinds,
      state: "pending",
    });
  }
  await insertDeliveries(db, rows);
  // sendBatch takes at most 100 messages.
  for (let i = 0; i < rows.length; i += 100) {
    const due = rows.slice(i, i + 100).map((row): { body: DeliveryDue } => ({
      body: { kind: "delivery", version: 1, delivery_id: row.id },
    }));
    await env.NOTIFICATIONS.sendBatch(due);
  }
  return true;
}

/** One attempt of one delivery; false when it must be retried. */
async function attempt(env: NotificationEnv, db: Database, due: DeliveryDue): Promise<boolean> {
  const found = await deliveryToSend(db, due.delivery_id);
  // The subscription was deleted (with its deliveries), or the delivery is settled: nothing to send.
  if (found === undefined || found.delivery.state !== "pending") return true;
  const message = changeNotification(found.delivery, env.RESOLVER_BASE_URL);
  const sent = await sendSigned(env, found.subscription.endpointUrl, found.delivery.id, message);
  const at = new Date().toISOString();
  const ok = received(sent);
  await recordAttempt(db, found.delivery.id, {
    at,
    outcome: ok ? "delivered" : "failed",
    status: sent.ok ? sent.status : null,
    reason: ok ? null : sent.ok ? `answered HTTP ${sent.status}` : sent.reason.slice(0, 240),
    durationMs: sent.durationMs,
  });
  if (ok) {
    // The time from the publication to its receipt, what docs/events.md measures.
    console.log(
      JSON.stringify({
        level: "info",
        event: "notification_delivered",
        delivery_id: found.delivery.id,
        after_publication_ms: Date.parse(at) - Date.parse(found.delivery.publishedAt),
      }),
    );
  }
  return ok;
}

/** The notifications queue's consumer: publications are fanned out, deliveries attempted. */
export async function consumeNotifications(batch: MessageBatch<unknown>, env: NotificationEnv): Promise<void> {
  const shards = shardsOf(env);
  const db = shards.shard(0);
  for (const message of batch.messages) {
    const body = message.body;
    if (!isNotificationMessage(body)) {
      console.error(JSON.stringify({ level: "error", event: "notification_message_unreadable", id: message.id }));
      message.ack();
      continue;
    }
    try {
      // A fan-out either completes or throws; a delivery attempt may end refused by the endpoint.
      const done = body.kind === "publication" ? await fanOut(env, shards, body) : await attempt(env, db, body);
      if (done) message.ack();
      else message.retry({ delaySeconds: retryDelay(message.attempts) });
    } catch (error) {
      console.error(
        JSON.stringify({ level: "error", event: "notification_failed", kind: body.kind, message: String(error) }),
      );
      message.retry({ delaySeconds: retryDelay(message.attempts) });
    }
  }
}

/**
 * The dead-letter queue's consumer: a delivery whose retries all failed is marked dead, with a
 * last entry in its attempts log, and never sent again. A publication that could not be fanned
 * out is logged: its subscribers learn of the change from the next publication or by polling.
 */
export async function consumeDeadLetteredNotifications(
  batch: MessageBatch<unknown>,
  env: NotificationEnv,
): Promise<void> {
  const db = shardsOf(env).shard(0);
  for (const message of batch.messages) {
    const body = message.body;
    if (isNotificationMessage(body) && body.kind === "delivery") {
      const found = await deliveryToSend(db, body.delivery_id);
      if (found?.delivery.state === "pending") {
        await recordAttempt(db, body.delivery_id, {
          at: new Date().toISOString(),
          outcome: "dead-lettered",
          status: null,
          reason: "every retry failed; the delivery is not sent again",
          durationMs: null,
        });
      }
    } else {
      console.error(
        JSON.stringify({
          level: "error",
          event: "notification_dead_lettered",
          kind: isNotificationMessage(body) ? body.kind : "unreadable",
          passport_id: isNotificationMessage(body) && body.kind === "publication" ? body.passport_id : undefined,
        }),
      );
    }
    message.ack();
  }
}
