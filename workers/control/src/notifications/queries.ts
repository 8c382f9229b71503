// Every query of the notifications wing (docs/events.md); nothing else in the wing touches D1.
import { and, count, desc, eq, inArray, lt, or, sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import {
  events,
  notificationAttempts,
  notificationDeliveries,
  notificationSubscriptions,
  passports,
  publications,
} from "../db/schema.ts";

export type SubscriptionRow = typeof notificationSubscriptions.$inferSelect;
export type DeliveryRow = typeof notificationDeliveries.$inferSelect;
export type AttemptRow = typeof notificationAttempts.$inferSelect;
export type NewSubscription = typeof notificationSubscriptions.$inferInsert;
export type NewDelivery = typeof notificationDeliveries.$inferInsert;

/** A passport's organisation, or undefined when no passport has this id. */
export async function organisationOfPassport(db: Database, passportId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ organisationId: passports.organisationId })
    .from(passports)
    .where(eq(passports.id, passportId));
  return row?.organisationId;
}

/** How many subscriptions `subscriber` holds, and how many name an endpoint on `host` (anyone's). */
export async function subscriptionCounts(
  db: Database,
  subscriber: string,
  host: string,
): Promise<{ bySubscriber: number; byEndpoint: number }> {
  const [[mine], [onHost]] = await db.batch([
    db
      .select({ n: count() })
      .from(notificationSubscriptions)
      .where(eq(notificationSubscriptions.subscriber, subscriber)),
    db.select({ n: count() }).from(notificationSubscriptions).where(eq(notificationSubscriptions.endpointHost, host)),
  ]);
  return { bySubscriber: mine?.n ?? 0, byEndpoint: onHost?.n ?? 0 };
}

/** The subscriber's subscription of the same endpoint to the same target, if it has one. */
export async function sameSubscription(
  db: Database,
  wanted: Pick<NewSubscription, "subscriber" | "endpointUrl" | "targetKind" | "targetId">,
): Promise<SubscriptionRow | undefined> {
  const [row] = await db
    .select()
    .from(notificationSubscriptions)
    .where(
      and(
        eq(notificationSubscriptions.subscriber, wanted.subscriber),
        eq(notificationSubscriptions.endpointUrl, wanted.endpointUrl),
        eq(notificationSubscriptions.targetKind, wanted.targetKind),
        eq(notificationSubscriptions.targetId, wanted.targetId),
      ),
    );
  return row;
}

/** Records a confirmed subscription; a concurrent twin of it leaves the first one standing. */
export async function insertSubscription(db: Database, row: NewSubscription): Promise<SubscriptionRow> {
  await db.insert(notificationSubscriptions).values(row).onConflictDoNothing();
  const stored = await sameSubscription(db, row);
  if (!stored) throw new Error(`subscription ${row.id} was not stored`);
  return stored;
}

/** The subscriber's subscriptions, newest first. */
export function subscriptionsOf(db: Database, subscriber: string): Promise<SubscriptionRow[]> {
  return db
    .select()
    .from(notificationSubscriptions)
    .where(eq(notificationSubscriptions.subscriber, subscriber))
    .orderBy(desc(notificationSubscriptions.createdAt), desc(notificationSubscriptions.id));
}

/** Subscription `id` when `subscriber` made it; another subscriber's is not found. */
export async function subscriptionOf(
  db: Database,
  subscriber: string,
  id: string,
): Promise<SubscriptionRow | undefined> {
  const [row] = await db
    .select()
    .from(notificationSubscriptions)
    .where(and(eq(notificationSubscriptions.id, id), eq(notificationSubscriptions.subscriber, subscriber)));
  return row;
}

/** Removes a subscription with its deliveries and their attempts (the foreign keys cascade). */
export async function deleteSubscription(db: Database, id: string): Promise<void> {
  await db.batch([
    db
      .delete(notificationAttempts)
      .where(
        inArray(
          notificationAttempts.deliveryId,
          db
            .select({ id: notificationDeliveries.id })
            .from(notificationDeliveries)
            .where(eq(notificationDeliveries.subscriptionId, id)),
        ),
      ),
    db.delete(notificationDeliveries).where(eq(notificationDeliveries.subscriptionId, id)),
    db.delete(notificationSubscriptions).where(eq(notificationSubscriptions.id, id)),
  ]);
}

/**
 * What the fan-out of one publication reads of the passport, in one round trip of its shard: its
 * organisation, and whether a binding of class `signing_keys` changed since the passport's previous
 * publication (the `key` event kind, which only the events' details show). `organisationId` is
 * undefined when the shard has no such passport.
 */
export async function publicationFacts(
  db: Database,
  passportId: string,
  recordVersion: number,
): Promise<{ organisationId: string | undefined; keysChanged: boolean }> {
  const previousVersion = sql`(SELECT COALESCE(MAX(${publications.recordVersion}), 0) FROM ${publications}
    WHERE ${publications.passportId} = ${passportId} AND ${publications.recordVersion} < ${recordVersion})`;
  const [[passport], keyEvents] = await db.batch([
    db.select({ organisationId: passports.organisationId }).from(passports).where(eq(passports.id, passportId)),
    db
      .select({ n: count() })
      .from(events)
      .where(
        and(
          eq(events.passportId, passportId),
          sql`${events.recordVersion} > ${previousVersion}`,
          sql`${events.recordVersion} <= ${recordVersion}`,
          sql`${events.kind} LIKE 'binding.%'`,
          sql`json_extract(${events.detail}, '$.class') = 'signing_keys'`,
        ),
      ),
  ]);
  return { organisationId: passport?.organisationId, keysChanged: (keyEvents[0]?.n ?? 0) > 0 };
}

/**
 * The subscriptions to a passport or to its organisation. Subscriptions are service-wide (shard 0,
 * docs/sharding.md) while the passport is in its organisation's shard, so the organisation is
 * read there first (`publicationFacts`) and named here.
 */
export function subscriptionsTo(
  db: Database,
  passportId: string,
  organisationId: string | undefined,
): Promise<SubscriptionRow[]> {
  const toPassport = and(
    eq(notificationSubscriptions.targetKind, "passport"),
    eq(notificationSubscriptions.targetId, passportId),
  );
  return db
    .select()
    .from(notificationSubscriptions)
    .where(
      organisationId === undefined
        ? toPassport
        : or(
            toPassport,
            and(
              eq(notificationSubscriptions.targetKind, "organisation"),
              eq(notificationSubscriptions.targetId, organisationId),
            ),
          ),
    );
}

/** Records the deliveries of one publication; those already recorded (a retried fan-out) stay as they are. */
export async function insertDeliveries(db: Database, rows: NewDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  // 12 columns a row, under D1's 100 bound parameters per statement.
  const statements = [];
  for (let i = 0; i < rows.length; i += 8) {
    statements.push(
      db
        .insert(notificationDeliveries)
        .values(rows.slice(i, i + 8))
        .onConflictDoNothing(),
    );
  }
  const [first, ...rest] = statements;
  if (first) await db.batch([first, ...rest]);
}

/** A delivery with the subscription it is owed to; undefined once the subscription is gone. */
export async function deliveryToSend(
  db: Database,
  deliveryId: string,
): Promise<{ delivery: DeliveryRow; subscription: SubscriptionRow } | undefined> {
  const [row] = await db
    .select({ delivery: notificationDeliveries, subscription: notificationSubscriptions })
    .from(notificationDeliveries)
    .innerJoin(notificationSubscriptions, eq(notificationSubscriptions.id, notificationDeliveries.subscriptionId))
    .where(eq(notificationDeliveries.id, deliveryId));
  return row;
}

/**
 * Appends an attempt to the delivery's log (numbered after the last one) while the delivery is
 * pending, then settles it when the attempt does (delivered, or dead-lettered). A settled delivery
 * stays as it is: a late duplicate of its message, or an attempt that ends after the dead-letter
 * queue gave up, adds nothing.
 */
export async function recordAttempt(
  db: Database,
  deliveryId: string,
  attempt: Omit<AttemptRow, "deliveryId" | "attempt">,
): Promise<void> {
  const pending = sql`EXISTS (SELECT 1 FROM ${notificationDeliveries}
    WHERE ${notificationDeliveries.id} = ${deliveryId} AND ${notificationDeliveries.state} = 'pending')`;
  const insert = db.run(sql`INSERT INTO ${notificationAttempts}
    (delivery_id, attempt, at, status, outcome, reason, duration_ms)
    SELECT ${deliveryId}, next, ${attempt.at}, ${attempt.status}, ${attempt.outcome}, ${attempt.reason}, ${attempt.durationMs}
    FROM (SELECT COALESCE(MAX(${notificationAttempts.attempt}), 0) + 1 AS next FROM ${notificationAttempts}
      WHERE ${notificationAttempts.deliveryId} = ${deliveryId})
    WHERE ${pending}`);
  await insert;
  if (attempt.outcome === "failed") return;
  // Settled after its attempt is logged: should this fail, the message is retried, the delivery
  // still pending, and the endpoint may get it twice (at least once; `webhook-id` tells it so).
  await db
    .update(notificationDeliveries)
    .set({ state: attempt.outcome === "delivered" ? "delivered" : "dead", settledAt: attempt.at })
    .where(and(eq(notificationDeliveries.id, deliveryId), eq(notificationDeliveries.state, "pending")));
}

/** Deliveries one retention pass removes at most (with their attempts). */
const RETENTION_BATCH = 1000;

/**
 * Removes up to RETENTION_BATCH deliveries settled before `before`, oldest first, with their
 * attempts. One batch, so both statements pick the same deliveries.
 */
export async function deleteSettledDeliveries(db: Database, before: string): Promise<void> {
  const old = db
    .select({ id: notificationDeliveries.id })
    .from(notificationDeliveries)
    .where(lt(notificationDeliveries.settledAt, before))
    .orderBy(notificationDeliveries.settledAt)
    .limit(RETENTION_BATCH);
  await db.batch([
    db.delete(notificationAttempts).where(inArray(notificationAttempts.deliveryId, old)),
    db.delete(notificationDeliveries).where(inArray(notificationDeliveries.id, old)),
  ]);
}

/** Page size of a subscription's deliveries. */
export const DELIVERIES_PAGE = 50;

/**
 * A subscription's deliveries, newest first, each with its attempts in order; `before` (a
 * delivery's `created_at`) pages back.
 */
export async function deliveriesOf(
  db: Database,
  subscriptionId: string,
  before?: string,
): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] }[]> {
  const deliveries = await db
    .select()
    .from(notificationDeliveries)
    .where(
      and(
        eq(notificationDeliveries.subscriptionId, subscriptionId),
        before ? lt(notificationDeliveries.createdAt, before) : undefined,
      ),
    )
    .orderBy(desc(notificationDeliveries.createdAt), desc(notificationDeliveries.id))
    .limit(DELIVERIES_PAGE);
  if (deliveries.length === 0) return [];
  const attempts = await db
    .select()
    .from(notificationAttempts)
    .where(
      inArray(
        notificationAttempts.deliveryId,
        deliveries.map((d) => d.id),
      ),
    )
    .orderBy(notificationAttempts.deliveryId, notificationAttempts.attempt);
  return deliveries.map((delivery) => ({
    delivery,
    attempts: attempts.filter((a) => a.deliveryId === delivery.id),
  }));
}
