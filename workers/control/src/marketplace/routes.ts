import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../context.ts";
import { database } from "../db/client.ts";
import { Refusal } from "../failures.ts";
import { type MarketplaceEnv, secret } from "./config.ts";
import { sameSecret } from "./crypto.ts";
import { EventRejected, parseSubscriptionChange } from "./events.ts";
import { fulfill, limitFulfillForm } from "./fulfill.ts";
import { limitEvents, limitFulfill } from "./limits.ts";
import { applySubscriptionChange } from "./queries/subscriptions.ts";
import { snsSigningCertificates } from "./sns-certificates.ts";
import { SnsUnverified, verifySnsNotification } from "./sns-signature.ts";

/** The marketplace-facing routes. They sit outside /v1: the buyer's browser and the event relay carry no Dashboard token. */
export const marketplace = new Hono<AppEnv>();

const MAX_EVENT_BYTES = 256 * 1024;

// Rate limits (docs/limits.md), registered before the routes they guard.
marketplace.use("/fulfill", limitFulfill);
marketplace.use("/events", limitEvents);

marketplace.post("/fulfill", limitFulfillForm, (c) => fulfill(c.req.raw, c.env as MarketplaceEnv));

// Counts while the body streams in, so an oversize event is refused before it is read whole.
const limitEventBody = bodyLimit({
  maxSize: MAX_EVENT_BYTES,
  onError: () => {
    throw new Refusal("payload-too-large", { detail: `Events are limited to ${MAX_EVENT_BYTES} bytes.` });
  },
});

async function requireEventsSecret(headers: Headers, env: MarketplaceEnv): Promise<void> {
  const presented = /^Bearer (\S+)$/.exec(headers.get("authorization") ?? "")?.[1];
  if (!presented || !(await sameSecret(presented, secret(env, "MARKETPLACE_EVENTS_SECRET")))) {
    console.warn(JSON.stringify({ level: "warn", event: "marketplace_event_rejected", reason: "bad credentials" }));
    throw new Refusal(
      "unauthenticated",
      { detail: "A valid bearer secret is required." },
      { challengeRealm: "marketplace-events" },
    );
  }
}

/** The relay's bearer secret is checked before any of the body is read. */
const eventsSecret: MiddlewareHandler<AppEnv> = async (c, next) => {
  await requireEventsSecret(c.req.raw.headers, c.env as MarketplaceEnv);
  return next();
};

/**
 * `POST /marketplace/events`: subscription changes relayed from EventBridge (API destination with
 * an API-key connection) or from the legacy SNS topics (through a queue and a relay). SNS posts
 * text/plain, so the body is parsed as JSON whatever its declared type.
 */
marketplace.post("/events", eventsSecret, limitEventBody, async (c) => {
  const env = c.env as MarketplaceEnv;
  const bytes = await c.req.arrayBuffer();
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw new Refusal("invalid-request", { detail: "The body is not UTF-8 JSON." });
  }
  const certificates = snsSigningCertificates(env);
  let change: Awaited<ReturnType<typeof parseSubscriptionChange>>;
  try {
    change = await parseSubscriptionChange(body, new Date().toISOString(), (envelope) =>
      verifySnsNotification(envelope, certificates),
    );
  } catch (error) {
    if (error instanceof EventRejected) throw new Refusal("invalid-request", { detail: error.message });
    if (error instanceof SnsUnverified) {
      console.warn(
        JSON.stringify({
          level: "warn",
          event: "marketplace_event_rejected",
          reason: error.message,
          retryable: error.retryable,
        }),
      );
      throw error.retryable
        ? new Refusal("unavailable", { detail: "The SNS signing certificate could not be fetched; retry later." })
        : new Refusal("invalid-request", { detail: `Refused: ${error.message}` });
    }
    throw error;
  }
  const applied = await applySubscriptionChange(database(c.env.DB), change);
  console.log(
    JSON.stringify({
      level: "info",
      event: "marketplace_event",
      kind: change.kind,
      ...(change.claimedTime ? { claimed_time: change.claimedTime, recorded_time: change.occurredAt } : {}),
      outcome: applied.outcome,
      duplicate: applied.duplicate,
    }),
  );
  return c.json({
    event_id: change.eventId,
    kind: change.kind,
    status: change.status ?? null,
    occurred_at: change.occurredAt,
    outcome: applied.outcome,
    duplicate: applied.duplicate,
  });
});
