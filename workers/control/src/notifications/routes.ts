import { Hono } from "hono";
import { operation } from "../api/operations.ts";
import type { AppEnv } from "../context.ts";
import type { Database } from "../db/client.ts";
import { Refusal } from "../failures.ts";
import { chargeEndpointHost, limitSubscribing } from "./limits.ts";
import {
  DELIVERIES_PAGE,
  deleteSubscription,
  deliveriesOf,
  type SubscriptionRow,
  subscriptionOf,
  subscriptionsOf,
} from "./queries.ts";
import { endpointOf, subscribe } from "./rules.ts";
import { DeliveriesQuery, DeliveryList, SubscribeRequest, SubscriptionList, SubscriptionView } from "./schemas.ts";
import { deliveryView, subscriptionView } from "./views.ts";

/** The change-notification subscriptions of the authenticated subject, mounted at /v1/notifications. */
export const notificationsApi = new Hono<AppEnv>();

notificationsApi.use("/subscriptions", limitSubscribing);

notificationsApi.post(
  "/subscriptions",
  operation({
    method: "post",
    path: "/v1/notifications/subscriptions",
    summary:
      "Subscribe an HTTPS endpoint to changes of a passport or of an organisation's passports (the endpoint must echo a challenge first)",
    role: "any member",
    body: { SubscribeRequest },
    response: { SubscriptionView },
    status: 201,
    alsoStatus: 200,
  }),
  async (c) => {
    const body = c.req.valid("json");
    const subscriber = c.get("principal").subject;
    await chargeEndpointHost(c.env, endpointOf(c.env, body.endpoint_url).hostname);
    const target = body.passport_id
      ? { kind: "passport" as const, id: body.passport_id }
      : { kind: "organisation" as const, id: body.organisation_id as string };
    const { subscription, created } = await subscribe(c.env, c.get("db"), subscriber, {
      endpointUrl: body.endpoint_url,
      target,
      events: [...new Set(body.events)],
    });
    c.header("location", `/v1/notifications/subscriptions/${subscription.id}`);
    return c.json(subscriptionView(subscription), created ? 201 : 200);
  },
);

notificationsApi.get(
  "/subscriptions",
  operation({
    method: "get",
    path: "/v1/notifications/subscriptions",
    summary: "Your change-notification subscriptions, newest first",
    role: "any member",
    response: { SubscriptionList },
  }),
  async (c) => {
    const rows = await subscriptionsOf(c.get("db"), c.get("principal").subject);
    return c.json({ items: rows.map(subscriptionView) });
  },
);

/** The caller's subscription `id`; anyone else's is not found. */
async function ownSubscription(db: Database, subject: string, id: string): Promise<SubscriptionRow> {
  const found = await subscriptionOf(db, subject, id);
  if (!found) throw new Refusal("subscription-not-found", { detail: "You have no subscription with this id." });
  return found;
}

notificationsApi.get(
  "/subscriptions/:id",
  operation({
    method: "get",
    path: "/v1/notifications/subscriptions/{id}",
    summary: "One of your change-notification subscriptions",
    role: "any member",
    response: { SubscriptionView },
  }),
  async (c) =>
    c.json(subscriptionView(await ownSubscription(c.get("db"), c.get("principal").subject, c.req.param("id")))),
);

notificationsApi.delete(
  "/subscriptions/:id",
  operation({
    method: "delete",
    path: "/v1/notifications/subscriptions/{id}",
    summary: "Unsubscribe: nothing more is sent, and the deliveries' log goes with it",
    role: "any member",
    status: 204,
  }),
  async (c) => {
    const subscription = await ownSubscription(c.get("db"), c.get("principal").subject, c.req.param("id"));
    await deleteSubscription(c.get("db"), subscription.id);
    return c.body(null, 204);
  },
);

notificationsApi.get(
  "/subscriptions/:id/deliveries",
  operation({
    method: "get",
    path: "/v1/notifications/subscriptions/{id}/deliveries",
    summary: "A subscription's deliveries, newest first, each with its attempts (status, reason, duration)",
    role: "any member",
    query: DeliveriesQuery,
    response: { DeliveryList },
  }),
  async (c) => {
    const subscription = await ownSubscription(c.get("db"), c.get("principal").subject, c.req.param("id"));
    const page = await deliveriesOf(c.get("db"), subscription.id, c.req.valid("query").before);
    const last = page.at(-1);
    return c.json({
      items: page.map(deliveryView),
      next_before: page.length === DELIVERIES_PAGE && last ? last.delivery.createdAt : null,
    });
  },
);
