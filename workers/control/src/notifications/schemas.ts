import { z } from "zod";
import { EVENT_KINDS } from "./kinds.ts";

// The notifications API's request and answer shapes: the routes validate with them and the
// OpenAPI document is generated from them (api/operations.ts).

const identityId = z.string().min(1).max(200);

export const SubscribeRequest = z
  .strictObject({
    endpoint_url: z
      .string()
      .max(2048)
      .describe(
        "The HTTPS URL that receives the deliveries. It must echo the challenge sent to it before the subscription exists (docs/events.md).",
      ),
    passport_id: identityId
      .optional()
      .describe("One passport, by identity id; any published passport may be followed."),
    organisation_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("Every passport of an organisation you are a member of."),
    events: z
      .array(z.enum(EVENT_KINDS))
      .min(1)
      .max(EVENT_KINDS.length)
      .describe(
        "What to be told about: lifecycle (suspension, revocation, retirement, reactivation), binding (lapse, recovery, contest, added or removed), key (a signing_keys binding changed), authority (granted, removed, expired, responsibility), version (every new record version).",
      ),
  })
  .refine((body) => (body.passport_id === undefined) !== (body.organisation_id === undefined), {
    message: "name exactly one of passport_id and organisation_id",
    path: ["passport_id"],
  });
export type SubscribeRequest = z.infer<typeof SubscribeRequest>;

export const SubscriptionView = z.object({
  id: z.string(),
  endpoint_url: z.string(),
  target: z.object({ kind: z.enum(["passport", "organisation"]), id: z.string() }),
  events: z.array(z.enum(EVENT_KINDS)),
  created_at: z.string(),
  confirmed_at: z.string().describe("When the endpoint echoed the challenge."),
  deliveries_url: z.string().describe("The attempts log of this subscription's deliveries."),
});

export const SubscriptionList = z.object({ items: z.array(SubscriptionView) });

const AttemptView = z.object({
  attempt: z.int(),
  at: z.string(),
  outcome: z.enum(["delivered", "failed", "dead-lettered"]),
  status: z.int().nullable().describe("The endpoint's HTTP status, when it answered."),
  reason: z.string().nullable(),
  duration_ms: z.int().nullable(),
});

export const DeliveryView = z.object({
  id: z.string().describe("The webhook-id of every attempt: the receiver's idempotency key."),
  identity_id: z.string(),
  record_version: z.int(),
  digest: z.string(),
  events: z.array(z.enum(EVENT_KINDS)),
  change_kinds: z.array(z.string()),
  published_at: z.string(),
  state: z
    .enum(["pending", "delivered", "dead"])
    .describe("dead: every retry failed and the delivery left the dead-letter queue; it is not sent again."),
  created_at: z.string(),
  settled_at: z.string().nullable(),
  attempts: z.array(AttemptView),
});

export const DeliveryList = z.object({
  items: z.array(DeliveryView),
  next_before: z.string().nullable().describe("Pass as `before` for older deliveries; null on the last page."),
});

export const DeliveriesQuery = z.object({
  before: z.string().max(40).optional().describe("Only deliveries created before this time (a page's next_before)."),
});
