import type { z } from "zod";
import type { EventKind } from "./kinds.ts";
import type { AttemptRow, DeliveryRow, SubscriptionRow } from "./queries.ts";
import type { DeliveryView, SubscriptionView } from "./schemas.ts";

export function subscriptionView(row: SubscriptionRow): z.infer<typeof SubscriptionView> {
  return {
    id: row.id,
    endpoint_url: row.endpointUrl,
    target: { kind: row.targetKind, id: row.targetId },
    events: row.eventKinds as EventKind[],
    created_at: row.createdAt,
    confirmed_at: row.confirmedAt,
    deliveries_url: `/v1/notifications/subscriptions/${row.id}/deliveries`,
  };
}

export function deliveryView({
  delivery,
  attempts,
}: {
  delivery: DeliveryRow;
  attempts: AttemptRow[];
}): z.infer<typeof DeliveryView> {
  return {
    id: delivery.id,
    identity_id: delivery.passportId,
    record_version: delivery.recordVersion,
    digest: delivery.digest,
    events: delivery.eventKinds as EventKind[],
    change_kinds: delivery.changeKinds,
    published_at: delivery.publishedAt,
    state: delivery.state,
    created_at: delivery.createdAt,
    settled_at: delivery.settledAt,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      at: a.at,
      outcome: a.outcome,
      status: a.status,
      reason: a.reason,
      duration_ms: a.durationMs,
    })),
  };
}
