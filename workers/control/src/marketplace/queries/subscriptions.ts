import { sql } from "drizzle-orm";
import { marketplaceAccounts, marketplaceCustomers, marketplaceEvents } from "../../db/acquisitions-schema.ts";
import type { Database } from "../../db/client.ts";
import { randomReference } from "../crypto.ts";
import { changeKey, type SubscriptionChange } from "../events.ts";

export interface AppliedChange {
  duplicate: boolean;
  customerKey: string | null;
  outcome: "applied" | "recorded" | "unmatched";
}

/**
 * Records one subscription change on the agreement it names (spec 6 leaves events open; see
 * docs/acquisition.md). The event id's primary key makes a replay report itself as a duplicate,
 * and the status write is idempotent on its own: it only takes effect when the event is not older
 * than the status already recorded. Nothing here touches organisations or passports: a
 * subscription ending never deletes or repurposes an identity (spec 3, 1.6).
 */
export async function applySubscriptionChange(db: Database, change: SubscriptionChange): Promise<AppliedChange> {
  const key = changeKey(change) ?? null;
  const receivedAt = change.receivedAt;
  const outcome = key === null ? "unmatched" : change.status ? "applied" : "recorded";
  const eventInsert = db
    .insert(marketplaceEvents)
    .values({
      eventId: change.eventId,
      format: change.format,
      kind: change.kind,
      customerKey: key,
      occurredAt: change.occurredAt,
      outcome,
      receivedAt,
    })
    .onConflictDoNothing()
    .returning({ eventId: marketplaceEvents.eventId });
  if (key === null || !change.status) {
    const inserted = await eventInsert;
    return { duplicate: inserted.length === 0, customerKey: key, outcome };
  }
  const accountKey = change.awsAccountId
    ? `aws-account:${change.awsAccountId}`
    : `legacy-customer:${change.customerIdentifier ?? ""}`;
  const newer = sql`${marketplaceCustomers.statusAt} <= ${change.occurredAt}`;
  const [inserted] = await db.batch([
    eventInsert,
    db
      .insert(marketplaceCustomers)
      .values({
        id: randomReference("mpc_"),
        customerKey: key,
        marketplaceAccountId: sql`(SELECT ${marketplaceAccounts.id} FROM ${marketplaceAccounts} WHERE ${marketplaceAccounts.customerKey} = ${accountKey})`,
        awsAccountId: change.awsAccountId,
        licenseArn: change.licenseArn,
        customerIdentifier: change.customerIdentifier,
        productCode: change.productCode,
        agreementId: change.agreementId,
        status: change.status,
        statusAt: change.occurredAt,
        lastEvent: change.kind,
        updatedAt: receivedAt,
      })
      .onConflictDoUpdate({
        target: marketplaceCustomers.customerKey,
        set: {
          status: sql`CASE WHEN ${newer} THEN ${change.status} ELSE ${marketplaceCustomers.status} END`,
          lastEvent: sql`CASE WHEN ${newer} THEN ${change.kind} ELSE ${marketplaceCustomers.lastEvent} END`,
          statusAt: sql`max(${marketplaceCustomers.statusAt}, ${change.occurredAt})`,
          agreementId: sql`coalesce(${marketplaceCustomers.agreementId}, ${change.agreementId ?? null})`,
          updatedAt: receivedAt,
        },
      }),
  ]);
  return { duplicate: inserted.length === 0, customerKey: key, outcome };
}
