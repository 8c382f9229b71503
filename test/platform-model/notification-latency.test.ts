// From a revocation to its signed delivery, under the platform model (docs/events.md, "Measured"):
// the real control plane, its publication, both hops of the notifications queue (Miniflare's
// queue, with the batch timeout of workers/control/wrangler.toml) and the post through the
// outbound adapter to a receiver on the hosts simulator, D1 at the planning latency of 1 ms a
// round trip (docs/scaling.md). It also counts the D1 round trips a delivery adds: the same wave
// of revocations with and without a subscription each. `npm run bench -- notifications` reads the
// figures line it prints.
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { verifyNotification } from "../../packages/verifier/src/index.ts";
import { platformModel } from "../../workers/platform-model/src/model.ts";
import { Caller } from "../support/api.ts";
import { type ReceivedPost, receivedBy, receiver, uniqueHost } from "../support/hosts.ts";

const SAMPLES = Number(env.TEST_NOTIFICATION_SAMPLES || 5);
/** D1's planning latency (docs/scaling.md): each round trip waits this long before it runs. */
const D1_LATENCY_MS = 1;
/** Long enough for both queue hops of a fan-out that delivers nothing (batch timeout 1 s each). */
const SETTLE_MS = 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
};
const d1RoundTrips = () => platformModel.counters().d1.DB?.roundTrips ?? 0;

/** A passport of its own caller (the per-subject subscribe limit is 10 a minute), with a receiver when `subscribed`. */
async function sample(subscribed: boolean) {
  const owner = await Caller.create("owner");
  const { identity_id: id } = await owner.createPassport();
  const host = uniqueHost("latency");
  if (subscribed) {
    await receiver(host, { path: "/hook" });
    await owner.json(
      "POST",
      "/v1/notifications/subscriptions",
      { endpoint_url: `https://${host}/hook`, passport_id: id, events: ["lifecycle"] },
      201,
    );
  }
  return { owner, id, host };
}

async function delivered(host: string, ms = 20_000): Promise<ReceivedPost> {
  const until = Date.now() + ms;
  for (;;) {
    const found = (await receivedBy(host)).find((post) => JSON.parse(post.body).type === "passport.changed");
    if (found) return found;
    if (Date.now() > until) throw new Error(`no delivery at ${host}`);
    await sleep(20);
  }
}

describe("a revocation's notification under the platform model", () => {
  afterAll(() => {
    platformModel.d1("DB").latencyMs = 0;
  });

  it("arrives signed within seconds, and costs a bounded number of D1 round trips per delivery", async () => {
    const quiet = await Promise.all(Array.from({ length: SAMPLES }, () => sample(false)));
    const watched = await Promise.all(Array.from({ length: SAMPLES }, () => sample(true)));
    platformModel.d1("DB").latencyMs = D1_LATENCY_MS;

    // Revocations of passports nobody subscribed to: the publication and an empty fan-out.
    await sleep(SETTLE_MS);
    const beforeQuiet = d1RoundTrips();
    for (const { owner, id } of quiet) await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "revoked" });
    await sleep(SETTLE_MS);
    const quietTrips = d1RoundTrips() - beforeQuiet;

    // The same with one subscription each: one at a time, from the request to the receipt.
    const fromRequest: number[] = [];
    const fromPublication: number[] = [];
    const beforeWatched = d1RoundTrips();
    for (const { owner, id, host } of watched) {
      const started = Date.now();
      const revoked = await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "revoked" });
      const post = await delivered(host);
      const received = Date.parse(post.at);
      const check = await verifyNotification(post.headers, post.body, { keys: JSON.parse(env.TEST_SIGNING_JWKS) });
      expect(check).toMatchObject({ ok: true, recheck: [{ identityId: id, recordVersion: revoked.record_version }] });
      fromRequest.push(received - started);
      const publishedAt = check.ok && check.type === "passport.changed" ? check.recheck[0]?.publishedAt : undefined;
      fromPublication.push(received - Date.parse(publishedAt ?? ""));
    }
    // The delivery's own writes (its attempt, its state) land right after the receipt.
    await sleep(SETTLE_MS);
    const watchedTrips = d1RoundTrips() - beforeWatched;
    const perDelivery = (watchedTrips - quietTrips) / SAMPLES;

    const figures = {
      samples: SAMPLES,
      d1_latency_ms: D1_LATENCY_MS,
      request_to_receipt_ms: { p50: percentile(fromRequest, 0.5), max: Math.max(...fromRequest) },
      publication_to_receipt_ms: { p50: percentile(fromPublication, 0.5), max: Math.max(...fromPublication) },
      d1_round_trips_per_publication_without_subscribers: quietTrips / SAMPLES,
      d1_round_trips_per_delivery: perDelivery,
    };
    console.log(`NOTIFICATION_FIGURES ${JSON.stringify(figures)}`);
    // Two queue hops of at most a 1 s batch timeout each, the publication and the post: a few seconds.
    expect(figures.request_to_receipt_ms.p50).toBeLessThan(5000);
    expect(figures.publication_to_receipt_ms.p50).toBeGreaterThan(0);
    // The delivery's read, its attempt and its state, and its row at the fan-out; a little slack
    // for a round trip counted in the other wave's window.
    expect(perDelivery).toBeLessThanOrEqual(6);
  });
});
