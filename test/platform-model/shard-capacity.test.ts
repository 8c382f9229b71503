import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { randomId } from "../../workers/control/src/db/client.ts";
import { Shards } from "../../workers/control/src/db/shards.ts";
import { D1Model, modelledD1 } from "../../workers/platform-model/src/d1.ts";
import { type ModelClient, ModelTime } from "../../workers/platform-model/src/model-time.ts";

// Measured capacity of sharding (docs/scaling.md, "Shards, measured"): the same write load on 1, 2
// and 4 shards under the platform model's D1, each database one writer that every round trip holds
// for D1's planning figure of 1 ms. Each write is a passport creation's 5 round trips (4 reads by
// index and one batch of writes, docs/publication.md), routed by db/shards.ts, and registers its
// identity id in the directory, which is modelled the same way and reported beside the shards.
//
// The run is in model time (workers/platform-model/src/model-time.ts): each writer has its own
// clock, the databases serve round trips in the order of those clocks, and a round trip's service
// time moves its writer's clock rather than being waited for. The queries themselves run, one at a
// time, against the local databases; how fast this machine runs them changes how long the run
// takes, not what it measures, so a loaded machine in a full test run gets the same figures.

const SERVICE_MS = 1;
/** Concurrent writers, each writing passports of its own organisation back to back: 4 a shard at 4 shards. */
const WRITERS = 16;
/** Model seconds each run lasts: some hundreds of writes a run, which take this machine seconds.
 * A longer run measures the same: in model time nothing varies from one second to the next. */
const SECONDS = 0.5;
/** The queries run one at a time: about 4,000 at 0.5 model seconds, a few ms each on a loaded machine. */
const REAL_TIMEOUT_MS = 300_000;
const SPARE = [env.DB, env.DB_SHARD_1, env.DB_SHARD_2, env.DB_SHARD_3] as D1Database[];

interface Run {
  shards: number;
  writes: number;
  writesPerSecond: number;
  /** The longest a round trip waited for its shard's writer (the pending bound), in ms, per shard. */
  maxWaitMs: number[];
  directory: { roundTripsPerSecond: number; maxWaitMs: number };
}

async function run(count: number): Promise<Run> {
  const spare = SPARE.slice(0, count);
  // The writers' organisations, one writer each, spread evenly over the shards (pinned: a hash of
  // 16 ids can leave a shard with none, which would measure the hash, not the shards).
  const unmodelled = new Shards(spare, env.DIRECTORY as D1Database);
  const organisations = await Promise.all(
    Array.from({ length: WRITERS }, async (_, n) => {
      const organisationId = randomId("org");
      const subject = randomId("user");
      const d1 = spare[await unmodelled.placeOrganisation(organisationId, { shard: n % count })] as D1Database;
      await d1.batch([
        d1.prepare("INSERT INTO organisations (id, name) VALUES (?1, 'Simulated')").bind(organisationId),
        d1
          .prepare("INSERT INTO members (organisation_id, subject, role) VALUES (?1, ?2, 'editor')")
          .bind(organisationId, subject),
      ]);
      return { organisationId, subject };
    }),
  );

  const models = spare.map(() => new D1Model({ serviceMs: SERVICE_MS }));
  const directoryModel = new D1Model({ serviceMs: SERVICE_MS });
  const time = new ModelTime();
  const deadline = SECONDS * 1000;
  let writes = 0;
  let ended = 0;
  // Each writer is a model-time client with its own handles over the shared models, as each
  // request of the service is its own isolate's call to the same databases.
  const writer = async ({ organisationId, subject }: (typeof organisations)[number], client: ModelClient) => {
    const shards = new Shards(
      spare.map((d1, n) => modelledD1(d1, models[n] as D1Model, client)),
      modelledD1(env.DIRECTORY as D1Database, directoryModel, client),
    );
    try {
      while (client.now < deadline) {
        const d1 = (await shards.forOrganisation(organisationId)).$client;
        const id = randomId("ip");
        const endpoint = `https://${id}.example.com/`;
        const at = new Date().toISOString();
        const read = (sql: string, ...values: string[]) =>
          d1
            .prepare(sql)
            .bind(...values)
            .first();
        await read("SELECT role FROM members WHERE organisation_id = ?1 AND subject = ?2", organisationId, subject);
        await read("SELECT id FROM organisations WHERE id = ?1", organisationId);
        await read("SELECT id FROM passports WHERE id = ?1", id);
        await read("SELECT id FROM bindings WHERE class = 'endpoint' AND value = ?1", endpoint);
        await d1.batch([
          d1
            .prepare(
              `INSERT INTO passports (id, organisation_id, family, display_name, state_as_of, updated_at)
               VALUES (?1, ?2, 'api', 'Simulated', ?3, ?3)`,
            )
            .bind(id, organisationId, at),
          d1
            .prepare(
              "INSERT INTO bindings (id, passport_id, class, value, bound_at) VALUES (?1, ?2, 'endpoint', ?3, ?4)",
            )
            .bind(randomId("bd"), id, endpoint, at),
          d1
            .prepare(
              `INSERT INTO events (passport_id, organisation_id, actor, at, kind, detail, record_version)
               VALUES (?1, ?2, ?3, ?4, 'passport.created', '{}', 1)`,
            )
            .bind(id, organisationId, subject, at),
          d1
            .prepare("INSERT INTO outbox (passport_id, record_version, next_attempt_at) VALUES (?1, 1, ?2)")
            .bind(id, at),
        ]);
        await shards.registerIdentity(id, organisationId);
        writes++;
      }
      ended = Math.max(ended, client.now);
    } finally {
      client.done();
    }
  };
  await Promise.all(organisations.map((organisation) => writer(organisation, time.client())));

  const seconds = ended / 1000;
  const directory = directoryModel.counters();
  return {
    shards: count,
    writes,
    writesPerSecond: Math.round(writes / seconds),
    maxWaitMs: models.map((model) => model.counters().maxWaitMs),
    directory: {
      roundTripsPerSecond: Math.round(directory.roundTrips / seconds),
      maxWaitMs: directory.maxWaitMs,
    },
  };
}

/** The table docs/scaling.md quotes, one line a run. */
function table(runs: Run[]): string {
  const lines = runs.map(
    (r) =>
      `${String(r.shards).padStart(6)} | ${String(r.writesPerSecond).padStart(15)} | ${String(Math.round(r.writesPerSecond / r.shards)).padStart(9)} | ${`${Math.max(...r.maxWaitMs)} ms`.padStart(13)} | ${String(r.directory.roundTripsPerSecond).padStart(25)}`,
  );
  return [
    `shard capacity, ${WRITERS} writers, ${SECONDS} model s a run, ${SERVICE_MS} ms a round trip:`,
    "shards | writes a second | per shard | pending bound | directory round trips/s",
    ...lines,
  ].join("\n");
}

describe("the capacity of shards under the platform model's D1", () => {
  it(
    "sustains at least 3 times the writes of one shard on 4, at the same load",
    async () => {
      for (const spare of SPARE.slice(2)) await applyD1Migrations(spare, env.TEST_MIGRATIONS);
      const runs: Run[] = [];
      for (const count of [1, 2, 4]) runs.push(await run(count));
      // The figures docs/scaling.md quotes, printed before the assertions judge them.
      console.log(table(runs));
      console.log(
        JSON.stringify({ shardCapacity: { serviceMs: SERVICE_MS, writers: WRITERS, seconds: SECONDS, runs } }),
      );
      const [one, two, four] = runs.map((r) => r.writesPerSecond) as [number, number, number];
      // One database is bound by its writer: 5 round trips of 1 ms each, at most 200 writes a second.
      expect(one).toBeLessThanOrEqual(1000 / (5 * SERVICE_MS));
      expect(two).toBeGreaterThan(1.5 * one);
      expect(four).toBeGreaterThanOrEqual(3 * one);
    },
    REAL_TIMEOUT_MS,
  );
});
