import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MemoryNotificationIds, receiveNotification, verifyNotification } from "../../packages/verifier/src/index.ts";
import { signingKeyPair } from "../../scripts/dev-keys.mjs";
import { database } from "../../workers/control/src/db/client.ts";
import worker from "../../workers/control/src/index.ts";
import { eventKindsOf } from "../../workers/control/src/notifications/kinds.ts";
import { forgetSettledDeliveries } from "../../workers/control/src/notifications/retention.ts";
import { RETRY_DELAYS_SECONDS, retryDelay } from "../../workers/control/src/notifications/retries.ts";
import { queueNames } from "../../workers/control/src/queues.ts";
import { type Body, Caller, resolve } from "../support/api.ts";
import { json, type ReceivedPost, receivedBy, receiver, serve, uniqueHost } from "../support/hosts.ts";

const SUBSCRIPTIONS = "/v1/notifications/subscriptions";
const keys = () => JSON.parse(env.TEST_SIGNING_JWKS);
const PROBLEM = "urn:svc:passport:problem:";

/** A receiver on a fresh host that echoes every challenge and answers deliveries `status`. */
async function freshReceiver(options: { acceptSubscribers?: string[]; deliveryStatus?: number } = {}) {
  const host = uniqueHost("hooks");
  await receiver(host, {
    path: "/passport-events",
    ...(options.acceptSubscribers ? { accept_subscribers: options.acceptSubscribers } : {}),
    ...(options.deliveryStatus ? { delivery_status: options.deliveryStatus } : {}),
  });
  return { host, url: `https://${host}/passport-events` };
}

function subscribe(caller: Caller, body: Record<string, unknown>) {
  return caller.request("POST", SUBSCRIPTIONS, body);
}

const ofType = (posts: ReceivedPost[], type: string) => posts.filter((p) => JSON.parse(p.body).type === type);

/** The Standard Webhooks headers of a received post, as a receiver's framework would hand them on. */
const webhookHeaders = (post: ReceivedPost | undefined) =>
  Object.fromEntries(Object.entries(post?.headers ?? {}).filter(([name]) => name.startsWith("webhook-")));

/** Waits (up to `ms`) until `host` received a change notification for `identityId` at `version`. */
async function changeArriving(host: string, identityId: string, version: number, ms = 20_000): Promise<ReceivedPost> {
  const until = Date.now() + ms;
  for (;;) {
    const found = ofType(await receivedBy(host), "passport.changed").find((post) => {
      const { data } = JSON.parse(post.body);
      return data.identity_id === identityId && data.record_version === version;
    });
    if (found) return found;
    if (Date.now() > until) throw new Error(`no change notification for ${identityId} v${version} at ${host}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Delivers one message to the notifications consumer (or its dead-letter queue's) as the queue would. */
async function deliver(body: unknown, attempts: number, queue = queueNames(undefined).notifications) {
  const batch = createMessageBatch(queue, [{ id: crypto.randomUUID(), timestamp: new Date(), attempts, body }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env, ctx);
  const result = await getQueueResult(batch, ctx);
  const id = batch.messages[0]?.id as string;
  return { acked: result.explicitAcks.includes(id), retried: result.retryMessages.some((m) => m.msgId === id) };
}

describe("subscribing an endpoint", () => {
  it("sends a signed challenge and subscribes the endpoint once it echoes it; the same subscription again is the same one", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const { host, url } = await freshReceiver();
    const response = await subscribe(owner, { endpoint_url: url, passport_id: id, events: ["lifecycle"] });
    expect(response.status).toBe(201);
    const created = await response.json<Body>();
    expect(created).toMatchObject({
      endpoint_url: url,
      target: { kind: "passport", id },
      events: ["lifecycle"],
      deliveries_url: `${SUBSCRIPTIONS}/${created.id}/deliveries`,
    });
    expect(response.headers.get("location")).toBe(`${SUBSCRIPTIONS}/${created.id}`);

    const [challenge, ...more] = await receivedBy(host);
    expect(more).toEqual([]);
    const check = await verifyNotification(challenge?.headers ?? {}, challenge?.body ?? "", { keys: keys() });
    expect(check).toMatchObject({ ok: true, type: "subscription.challenge", subscriber: owner.subject });

    const again = await subscribe(owner, { endpoint_url: url, passport_id: id, events: ["lifecycle"] });
    expect(again.status).toBe(200);
    expect((await again.json<Body>()).id).toBe(created.id);
    expect(await receivedBy(host)).toHaveLength(1);
    const listed = await owner.json("GET", SUBSCRIPTIONS);
    expect(listed.items.map((s: Body) => s.id)).toEqual([created.id]);
    expect(await owner.json("GET", `${SUBSCRIPTIONS}/${created.id}`)).toEqual(created);
  });

  it("cannot subscribe someone else's endpoint: it does not echo that subscriber's challenge, and nothing is stored", async () => {
    const owner = await Caller.create("owner");
    const stranger = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const { host, url } = await freshReceiver({ acceptSubscribers: [owner.subject] });

    const refused = await subscribe(stranger, { endpoint_url: url, passport_id: id, events: ["version"] });
    expect(refused.status).toBe(422);
    expect(await refused.json<Body>()).toMatchObject({ type: `${PROBLEM}endpoint-not-confirmed` });
    expect((await stranger.json("GET", SUBSCRIPTIONS)).items).toEqual([]);
    const [asked] = await receivedBy(host);
    expect(JSON.parse(asked?.body ?? "{}").data.subscriber).toBe(stranger.subject);

    expect((await subscribe(owner, { endpoint_url: url, passport_id: id, events: ["version"] })).status).toBe(201);
  });

  it("refuses an endpoint that answers without echoing, one the outbound rules refuse, and an organisation one is not a member of", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const silent = uniqueHost("silent");
    await serve(silent, { "/hook": json({ ok: true }) });
    const unechoed = await subscribe(owner, {
      endpoint_url: `https://${silent}/hook`,
      passport_id: id,
      events: ["version"],
    });
    expect(unechoed.status).toBe(422);
    expect((await unechoed.json<Body>()).detail).toContain("did not echo the challenge");

    for (const endpoint of ["http://hooks.example.com/x", "https://10.0.0.1/x", "https://metadata.internal/x"]) {
      const response = await subscribe(owner, { endpoint_url: endpoint, passport_id: id, events: ["version"] });
      expect(response.status, endpoint).toBe(400);
      expect((await response.json<Body>()).errors[0].path).toBe("endpoint_url");
    }
    const both = await subscribe(owner, {
      endpoint_url: `https://${silent}/hook`,
      passport_id: id,
      organisation_id: owner.organisation,
      events: ["version"],
    });
    expect(both.status).toBe(400);

    const { url } = await freshReceiver();
    const stranger = await Caller.create("owner");
    const foreign = await subscribe(stranger, {
      endpoint_url: url,
      organisation_id: owner.organisation,
      events: ["version"],
    });
    expect(foreign.status).toBe(404);
    const own = await subscribe(owner, { endpoint_url: url, organisation_id: owner.organisation, events: ["version"] });
    expect(own.status).toBe(201);
    const missing = await subscribe(owner, { endpoint_url: url, passport_id: "psp_doesnotexist", events: ["version"] });
    expect(missing.status).toBe(404);
    expect((await missing.json<Body>()).type).toBe(`${PROBLEM}identity-not-found`);
  });
});

describe("caps and rate limits", () => {
  /** Stores `n` confirmed subscriptions directly, as if each had been confirmed. */
  async function seed(n: number, subscriber: (i: number) => string, host: string) {
    const statements = Array.from({ length: n }, (_, i) =>
      env.DB.prepare(
        `INSERT INTO notification_subscriptions (id, subscriber, endpoint_url, endpoint_host, target_kind, target_id, event_kinds, confirmed_at)
         VALUES (?, ?, ?, ?, 'passport', ?, '["version"]', ?)`,
      ).bind(
        `sub_seed${crypto.randomUUID()}`,
        subscriber(i),
        `https://${host}/h${i}`,
        host,
        `psp_seed${i}`,
        new Date().toISOString(),
      ),
    );
    await env.DB.batch(statements);
  }

  it("refuses a subscriber's 101st subscription and an endpoint host's 201st, before any challenge is sent", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    await seed(100, () => owner.subject, uniqueHost("seeded"));
    const { host, url } = await freshReceiver();
    const mine = await subscribe(owner, { endpoint_url: url, passport_id: id, events: ["version"] });
    expect(mine.status).toBe(409);
    expect(await mine.json<Body>()).toMatchObject({ type: `${PROBLEM}subscription-limit-reached`, limit: 100 });

    const other = await Caller.create("owner");
    await seed(200, (i) => `someone-${i}`, host);
    const crowded = await subscribe(other, { endpoint_url: url, passport_id: id, events: ["version"] });
    expect(crowded.status).toBe(409);
    expect(await crowded.json<Body>()).toMatchObject({ type: `${PROBLEM}subscription-limit-reached`, limit: 200 });
    expect(await receivedBy(host)).toEqual([]);
  });

  it("limits subscribing to 10 a minute per subject and 10 challenges a minute per endpoint host", async () => {
    const caller = await Caller.create("owner");
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await subscribe(caller, {})).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(400));
    expect(statuses[10]).toBe(429);

    const { url } = await freshReceiver();
    const perHost: Response[] = [];
    for (let i = 0; i < 11; i++) {
      const someone = await Caller.create("owner");
      perHost.push(await subscribe(someone, { endpoint_url: url, passport_id: "psp_nothere", events: ["version"] }));
    }
    expect(perHost.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill(404));
    expect(perHost[10]?.status).toBe(429);
    expect(perHost[10]?.headers.get("retry-after")).toBe("60");
  });
});

describe("deliveries", () => {
  it("delivers a revocation, signed, that verifyNotification accepts; a forged or replayed copy is refused", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const { host, url } = await freshReceiver();
    const lifecycle = await owner.json(
      "POST",
      SUBSCRIPTIONS,
      { endpoint_url: url, passport_id: id, events: ["lifecycle"] },
      201,
    );
    const other = await freshReceiver();
    const authorityOnly = await owner.json(
      "POST",
      SUBSCRIPTIONS,
      { endpoint_url: other.url, passport_id: id, events: ["authority"] },
      201,
    );

    const revoked = await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "revoked" });
    const delivery = await changeArriving(host, id, revoked.record_version);
    const { record } = await resolve(id);
    expect(record.state.lifecycle).toBe("revoked");

    const seen = new MemoryNotificationIds();
    const check = await verifyNotification(delivery.headers, delivery.body, { keys: keys(), seen });
    expect(check).toMatchObject({
      ok: true,
      type: "passport.changed",
      subscriptionId: lifecycle.id,
      recheck: [{ identityId: id, recordVersion: record.record_version, digest: record.digest, events: ["lifecycle"] }],
    });
    expect(JSON.parse(delivery.body).data).not.toHaveProperty("state");

    // Replayed within the window: the same id again is a duplicate; later, outside it, stale.
    expect(await verifyNotification(delivery.headers, delivery.body, { keys: keys(), seen })).toEqual({
      ok: false,
      problem: "duplicate",
    });
    const later = () => Date.now() + 10 * 60 * 1000;
    expect(await verifyNotification(delivery.headers, delivery.body, { keys: keys(), now: later })).toEqual({
      ok: false,
      problem: "stale",
    });
    // Forged: the body changed, or signed with a key the service does not publish.
    const altered = delivery.body.replace('"lifecycle"', '"version"');
    expect(await verifyNotification(delivery.headers, altered, { keys: keys() })).toEqual({
      ok: false,
      problem: "bad_signature",
    });
    const forger = JSON.parse((await signingKeyPair("EdDSA")).privateJwk);
    const forgerKey = await crypto.subtle.importKey("jwk", forger, { name: "Ed25519" }, false, ["sign"]);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const forgedSignature = await crypto.subtle.sign(
      { name: "Ed25519" },
      forgerKey,
      new TextEncoder().encode(`msg_forged.${timestamp}.${delivery.body}`),
    );
    const forgedHeaders = {
      "webhook-id": "msg_forged",
      "webhook-timestamp": timestamp,
      "webhook-signature": `v1a,${btoa(String.fromCharCode(...new Uint8Array(forgedSignature)))}`,
    };
    expect(await verifyNotification(forgedHeaders, delivery.body, { keys: keys() })).toEqual({
      ok: false,
      problem: "bad_signature",
    });
    expect(await verifyNotification({}, delivery.body, { keys: keys() })).toEqual({
      ok: false,
      problem: "missing_headers",
    });

    // The attempts log shows it delivered; the authority-only subscription was not told.
    const log = await owner.json("GET", `${SUBSCRIPTIONS}/${lifecycle.id}/deliveries`);
    expect(log.items[0]).toMatchObject({
      identity_id: id,
      record_version: record.record_version,
      digest: record.digest,
      state: "delivered",
      attempts: [{ attempt: 1, outcome: "delivered", status: 204 }],
    });
    expect((await owner.json("GET", `${SUBSCRIPTIONS}/${authorityOnly.id}/deliveries`)).items).toEqual([]);
  });

  it("a receiver built on receiveNotification invalidates the notified passport and acts once per delivery", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const { host, url } = await freshReceiver();
    await owner.json("POST", SUBSCRIPTIONS, { endpoint_url: url, passport_id: id, events: ["lifecycle"] }, 201);
    const suspended = await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "suspended" });
    const delivery = await changeArriving(host, id, suspended.record_version);

    const invalidated: string[] = [];
    const options = {
      keys: keys(),
      seen: new MemoryNotificationIds(),
      invalidates: [{ invalidate: (p: string) => void invalidated.push(p) }],
    };
    const post = (body: string) =>
      receiveNotification(
        new Request("https://consumer.example/hook", { method: "POST", headers: webhookHeaders(delivery), body }),
        options,
      );
    expect((await post(delivery.body)).status).toBe(204);
    expect((await post(delivery.body)).status).toBe(204);
    expect(invalidated).toEqual([id]);
    expect((await post(`${delivery.body} `)).status).toBe(401);

    const [challenge] = ofType(await receivedBy(host), "subscription.challenge");
    const echoed = await receiveNotification(
      new Request("https://consumer.example/hook", {
        method: "POST",
        headers: webhookHeaders(challenge),
        body: challenge?.body ?? "",
      }),
      { keys: keys() },
    );
    expect(await echoed.json()).toEqual({ challenge: JSON.parse(challenge?.body ?? "{}").data.challenge });
  });

  it("retries a failing endpoint with backoff, then the dead-letter queue marks the delivery dead, every attempt in its log", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const { host, url } = await freshReceiver({ deliveryStatus: 503 });
    const subscription = await owner.json(
      "POST",
      SUBSCRIPTIONS,
      { endpoint_url: url, passport_id: id, events: ["version"] },
      201,
    );
    const revoked = await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "revoked" });
    // The fan-out records the delivery; its first attempt fails with the endpoint's 503.
    await changeArriving(host, id, revoked.record_version);
    const [pending] = (await owner.json("GET", subscription.deliveries_url)).items;
    expect(pending.state).toBe("pending");

    // The queue's retries, driven here: each attempt fails and asks to be retried later.
    for (let attempts = 1; attempts <= RETRY_DELAYS_SECONDS.length + 1; attempts++) {
      expect(await deliver({ kind: "delivery", version: 1, delivery_id: pending.id }, attempts)).toEqual({
        acked: false,
        retried: true,
      });
    }
    // After max_retries the queue moves it to the dead-letter queue.
    const dlq = queueNames(undefined).notificationsDeadLetter;
    expect(await deliver({ kind: "delivery", version: 1, delivery_id: pending.id }, 1, dlq)).toEqual({
      acked: true,
      retried: false,
    });
    const [dead] = (await owner.json("GET", subscription.deliveries_url)).items;
    expect(dead.state).toBe("dead");
    const attempts: Body[] = dead.attempts;
    expect(attempts.length).toBeGreaterThanOrEqual(RETRY_DELAYS_SECONDS.length + 2);
    expect(attempts.at(-1)).toMatchObject({ outcome: "dead-lettered", status: null });
    for (const failed of attempts.slice(0, -1)) expect(failed).toMatchObject({ outcome: "failed", status: 503 });
    expect(attempts.map((a) => a.attempt)).toEqual(attempts.map((_, i) => i + 1));

    // Dead is final: a late copy of the message sends nothing more.
    const before = (await receivedBy(host)).length;
    expect(await deliver({ kind: "delivery", version: 1, delivery_id: pending.id }, 1)).toEqual({
      acked: true,
      retried: false,
    });
    expect(await receivedBy(host)).toHaveLength(before);
  });

  it("keeps a settled delivery in the attempts log for two weeks, a pending one until it settles", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const { url } = await freshReceiver();
    const subscription = await owner.json(
      "POST",
      SUBSCRIPTIONS,
      { endpoint_url: url, passport_id: id, events: ["version"] },
      201,
    );
    const now = new Date();
    const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000).toISOString();
    const rows: [string, string, string | null][] = [
      [`msg_old${crypto.randomUUID().slice(0, 8)}`, "delivered", daysAgo(15)],
      [`msg_recent${crypto.randomUUID().slice(0, 8)}`, "dead", daysAgo(13)],
      [`msg_pending${crypto.randomUUID().slice(0, 8)}`, "pending", null],
    ];
    for (const [delivery, state, settled] of rows) {
      await env.DB.batch([
        env.DB.prepare(
          `INSERT INTO notification_deliveries (id, subscription_id, passport_id, record_version, digest, published_at, change_kinds, event_kinds, state, created_at, settled_at)
           VALUES (?, ?, ?, 1, 'sha-256:x', ?, '[]', '["version"]', ?, ?, ?)`,
        ).bind(delivery, subscription.id, id, daysAgo(20), state, daysAgo(20), settled),
        env.DB.prepare(
          "INSERT INTO notification_attempts (delivery_id, attempt, at, outcome) VALUES (?, 1, ?, 'failed')",
        ).bind(delivery, daysAgo(20)),
      ]);
    }
    await forgetSettledDeliveries(database(env.DB), now);
    const kept = (await owner.json("GET", subscription.deliveries_url)).items.map((d: Body) => d.id);
    expect(kept.sort()).toEqual([rows[1]?.[0], rows[2]?.[0]].sort());
    const orphans = await env.DB.prepare("SELECT COUNT(*) AS n FROM notification_attempts WHERE delivery_id = ?")
      .bind(rows[0]?.[0])
      .first<{ n: number }>();
    expect(orphans?.n).toBe(0);
  });

  it("backs off from seconds to hours, and reads the event kinds from the change kinds", () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(retryDelay)).toEqual([5, 30, 120, 600, 1800, 7200, 7200]);
    expect(eventKindsOf(["state.lifecycle_changed"], false)).toEqual(["lifecycle", "version"]);
    expect(eventKindsOf(["binding.lapsed", "authority.expired"], false)).toEqual(["binding", "authority", "version"]);
    expect(eventKindsOf(["binding.verified"], true)).toEqual(["binding", "key", "version"]);
    expect(eventKindsOf(["organisation.renamed"], false)).toEqual(["version"]);
  });
});
