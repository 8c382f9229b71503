// `npm run bench -- notifications`: the time from a revocation to its signed delivery, and what a
// delivery costs, under the platform model (docs/events.md, "Measured"). The latency needs the
// control plane's publication, the notifications queue's two hops and an endpoint, which only the
// control plane's test runtime has together (Miniflare's queues, the hosts simulator, the platform
// model's D1), so this target runs test/platform-model/notification-latency.test.ts there and
// reads the figures it prints. The cost is priced from what a delivery does: its queue messages,
// its D1 rows written, its consumer invocation and CPU, at the prices of docs/deploy.md.
import { spawnSync } from "node:child_process";

export const description = "revocation to signed delivery under the platform model; cost per delivery";

/** Revocations timed per run (NOTIFICATION_SAMPLES; the test's own default is 5). */
const SAMPLES = Number(process.env.NOTIFICATION_SAMPLES ?? 20);

/**
 * Targets: a revocation reaches its subscriber within 5 s at p50 (two queue hops of at most a 1 s
 * batch timeout, the publication and the post), and a delivery adds at most 4 D1 round trips.
 */
const TARGETS = { p50Ms: 5000, d1RoundTrips: 4 };

/** Workers Paid prices beyond the included amounts, in dollars per million (docs/deploy.md, "What it costs"). */
const PRICE = { queueOperation: 0.4, d1RowWritten: 1.0, workerRequest: 0.3, cpuMs: 0.02 };

/**
 * What one delivery uses, by the code path (workers/control/src/notifications/): its delivery
 * message is written, read and deleted (3 queue operations), and so is the publication's
 * announcement, counted whole against a publication with one subscriber (the worst case); D1
 * writes its delivery row with its primary key and subscription index entries (3 rows, counted as
 * D1 counts an index entry written), its attempt row with its primary key index (2) and its
 * state (1); the consumer runs at most once per delivery (batches of
 * up to 10 share one) and signs with Ed25519, about 1 ms of CPU with the JSON around it.
 */
const PER_DELIVERY = { queueOperations: 6, d1RowsWritten: 6, workerRequests: 1, cpuMs: 1 };

function costPerMillion() {
  const parts = {
    queues: PER_DELIVERY.queueOperations * PRICE.queueOperation,
    d1: PER_DELIVERY.d1RowsWritten * PRICE.d1RowWritten,
    workers: PER_DELIVERY.workerRequests * PRICE.workerRequest + PER_DELIVERY.cpuMs * PRICE.cpuMs,
  };
  return { ...parts, total: parts.queues + parts.d1 + parts.workers };
}

export async function run({ root, log }) {
  log(`timing ${SAMPLES} revocations to their notification under the platform model`);
  const test = spawnSync(
    "pnpm",
    ["exec", "vitest", "run", "--project", "control", "test/platform-model/notification-latency.test.ts"],
    { cwd: root, encoding: "utf8", env: { ...process.env, NOTIFICATION_SAMPLES: String(SAMPLES) } },
  );
  const line = /NOTIFICATION_FIGURES (\{.*\})/.exec(`${test.stdout}\n${test.stderr}`)?.[1];
  if (test.status !== 0 || !line) {
    throw new Error(`the notification latency test failed:\n${test.stdout}\n${test.stderr}`);
  }
  const figures = JSON.parse(line);
  const cost = costPerMillion();
  const dollars = (n) => `$${n.toFixed(2)}`;
  return {
    results: [],
    notes: [
      `${figures.samples} revocations, D1 at ${figures.d1_latency_ms} ms a round trip: request to receipt p50 ${figures.request_to_receipt_ms.p50} ms (max ${figures.request_to_receipt_ms.max}); publication to receipt p50 ${figures.publication_to_receipt_ms.p50} ms (max ${figures.publication_to_receipt_ms.max})`,
      `D1 round trips: ${figures.d1_round_trips_per_publication_without_subscribers} per revocation nobody subscribed to (API, publication, empty fan-out), ${figures.d1_round_trips_per_delivery} more per delivery`,
      `cost per million deliveries: queues ${dollars(cost.queues)} + D1 rows written ${dollars(cost.d1)} + Workers ${dollars(cost.workers)} = ${dollars(cost.total)} (${PER_DELIVERY.queueOperations} queue operations, ${PER_DELIVERY.d1RowsWritten} rows written, at most ${PER_DELIVERY.workerRequests} invocation and about ${PER_DELIVERY.cpuMs} ms CPU each)`,
    ],
    checks: [
      {
        name: "revocation request to signed delivery, p50 (ms)",
        ok: figures.request_to_receipt_ms.p50 <= TARGETS.p50Ms,
        value: figures.request_to_receipt_ms.p50,
        target: TARGETS.p50Ms,
        at_most: true,
        digits: 0,
        detail: `${figures.samples} samples, max ${figures.request_to_receipt_ms.max} ms`,
      },
      {
        name: "D1 round trips a delivery adds",
        ok: figures.d1_round_trips_per_delivery <= TARGETS.d1RoundTrips,
        value: figures.d1_round_trips_per_delivery,
        target: TARGETS.d1RoundTrips,
        at_most: true,
        digits: 1,
        detail: "the same revocations with and without one subscription each",
      },
    ],
  };
}
