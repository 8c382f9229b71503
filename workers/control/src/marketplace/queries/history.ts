import { asc, desc, eq, inArray } from "drizzle-orm";
import {
  acquisitionStages,
  acquisitions,
  marketplaceAccounts,
  marketplaceCustomers,
  marketplaceEvents,
} from "../../db/acquisitions-schema.ts";
import type { Database } from "../../db/client.ts";
import { STAGE_LABELS, STAGES, type Stage } from "../stages.ts";

/** How much history one read returns: enough for years of a subscription's events, bounded per read. */
const EVENT_LIMIT = 200;
const ACQUISITION_LIMIT = 20;

/**
 * An organisation's marketplace subscriptions with what happened to them: each agreement's
 * subscription events (newest first) and each acquisition handoff with its stages, activation
 * among them. Every read is an index range (migration 0012); nothing here is written.
 */
export async function subscriptionHistory(db: Database, organisationId: string) {
  const [account] = await db
    .select({ id: marketplaceAccounts.id })
    .from(marketplaceAccounts)
    .where(eq(marketplaceAccounts.organisationId, organisationId))
    .limit(1);
  if (!account) return { subscriptions: [], acquisitions: [] };
  const [customers, handoffs] = await Promise.all([
    db
      .select()
      .from(marketplaceCustomers)
      .where(eq(marketplaceCustomers.marketplaceAccountId, account.id))
      .orderBy(asc(marketplaceCustomers.createdAt), asc(marketplaceCustomers.id)),
    db
      .select()
      .from(acquisitions)
      .where(eq(acquisitions.marketplaceAccountId, account.id))
      .orderBy(desc(acquisitions.createdAt))
      .limit(ACQUISITION_LIMIT),
  ]);
  const keys = customers.map((s) => s.customerKey);
  const [events, stages] = await Promise.all([
    keys.length
      ? db
          .select()
          .from(marketplaceEvents)
          .where(inArray(marketplaceEvents.customerKey, keys))
          .orderBy(desc(marketplaceEvents.occurredAt))
          .limit(EVENT_LIMIT)
      : [],
    handoffs.length
      ? db
          .select()
          .from(acquisitionStages)
          .where(
            inArray(
              acquisitionStages.acquisitionId,
              handoffs.map((a) => a.id),
            ),
          )
      : [],
  ]);
  return {
    subscriptions: customers.map((s) => ({
      product_code: s.productCode,
      license_arn: s.licenseArn,
      aws_account_id: s.awsAccountId,
      agreement_id: s.agreementId,
      status: s.status,
      status_at: s.statusAt,
      last_event: s.lastEvent,
      since: s.createdAt,
      events: events
        .filter((e) => e.customerKey === s.customerKey)
        .map((e) => ({ kind: e.kind, occurred_at: e.occurredAt, received_at: e.receivedAt, outcome: e.outcome })),
    })),
    acquisitions: handoffs.map((a) => ({
      acquisition_id: a.id,
      status: a.status,
      product_code: a.productCode,
      created_at: a.createdAt,
      stages: stages
        .filter((s) => s.acquisitionId === a.id)
        .sort((x, y) => STAGES.indexOf(x.stage as Stage) - STAGES.indexOf(y.stage as Stage))
        .map((s) => ({
          stage: s.stage,
          label: STAGE_LABELS[s.stage as Stage] ?? s.stage,
          status: s.status,
          attempts: s.attempts,
          at: s.updatedAt,
        })),
    })),
  };
}
