import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { randomId } from "../../workers/control/src/db/client.ts";
import { Shards } from "../../workers/control/src/db/shards.ts";
import { D1Model, modelledD1 } from "../../workers/platform-model/src/d1.ts";

// Measured capacity of sharding (docs/scaling.md, "Shards"): the same write load on 1, 2 and 4
// shards under the platform model's D1, each database one writer that every round trip holds for
// `serviceMs`. Each write is a passport creation's 5 round trips (4 reads by index and one batch
// of writes, docs/publication.md), routed by db/shards.ts, and registers its identity id in the
// directory, which is modelled the same way and reported beside the shards.
//
// Time is dilated: every local database runs in this one process on a shared 2-core machine, which
// manages some tens of such writes a second in all when the rest of the suite runs beside it, so a
// round trip holds its database for DILATION times D1's planning figure of 1 ms. The databases'
// bound then decides (4 shards: 10 writes a second), not the CPU; the figures are also reported at
// 1 ms (times DILATION). At 40 times, 4 shards under a full test run met the CPU (2.9 times one).

const DILATION = 80;
const SERVICE_MS = 1 * DILATION;
/** Concurrent writers, each writing passports of its own organisation back to back: 4 a shard at 4 shards. */
const WRITERS = 16;
const SECONDS = Number(env.TEST_SIMULATION_SECONDS) || 4;
const SPARE = [env.DB, env.DB_SHARD_1, env.DB_SHARD_2, env.DB_SHARD_3] as D1Database[];

interface Run {
  shards: number;
  writes: number;
  writesPerSecond: number;
  /** The same at D1's planning figure of 1 ms a round trip. */
  writesPerSecondAt1ms: number;
  /** The longest a round trip waited for its database's writer (the pending bound), in ms at 1 ms a round trip. */
  maxWaitMsAt1ms: number[];
  directory: { roundTripsPerSecondAt1ms: number; maxWaitMsAt1ms: number };
}

async function run(count: number): Promise<Run> {
  const models = SPARE.slice(0, count).map(() => new D1Model({ serviceMs: SERVICE_MS }));
  const directoryModel = new D1Model({ serviceMs: SERVICE_MS });
  const shards = new Shards(
    SPARE.slice(0, count).map((d1, n) => modelledD1(d1, models[n] as D1Model)),
    modelledD1(env.DIRECTORY as D1Database, directoryModel),
  );
  const writers = await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      const organisationId = randomId("org");
      const subject = randomId("user");
      await shards.placeOrganisation(organisationId);
      const d1 = (await shards.forOrganisation(organisationId)).$client;
      await d1.batch([
        d1.prepare("INSERT INTO organisations (id, name) VALUES (?1, 'Simulated')").bind(organisationId),
        d1
          .prepare("INSERT INTO members (organisation_id, subject, role) VALUES (?1, ?2, 'editor')")
          .bind(organisationId, subject),
      ]);
      return { organisationId, subject };
    }),
  );
  for (const model of [...models, directoryModel]) model.reset();

  const started = Date.now();
  const deadline = started + SECONDS * 1000;
  let writes = 0;
  await Promise.all(
    writers.map(async ({ organisationId, subject }) => {
      while (Date.now() < deadline) {
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
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  const directory = directoryModel.counters();
  return {
    shards: count,
    writes,
    writesPerSecond: Math.round((10 * writes) / seconds) / 10,
    writesPerSecondAt1ms: Math.round((writes / seconds) * DILATION),
    maxWaitMsAt1ms: models.map((model) => Math.round(model.counters().maxWaitMs / DILATION)),
    directory: {
      roundTripsPerSecondAt1ms: Math.round((directory.roundTrips / seconds) * DILATION),
      maxWaitMsAt1ms: Math.round(directory.maxWaitMs / DILATION),
    },
  };
}

describe("the capacity of shards under the platform model's D1", () => {
  it("sustains at least 3 times the writes of one shard on 4, at the same load", async () => {
    for (const spare of SPARE.slice(2)) await applyD1Migrations(spare, env.TEST_MIGRATIONS);
    const runs: Run[] = [];
    for (const count of [1, 2, 4]) runs.push(await run(count));
    // The figures docs/scaling.md quotes, printed before the assertions judge them.
    console.log(
      JSON.stringify({
        shardCapacity: { serviceMs: SERVICE_MS, dilation: DILATION, writers: WRITERS, seconds: SECONDS, runs },
      }),
    );
    const [one, two, four] = runs.map((r) => r.writesPerSecond) as [number, number, number];
    // One database is bound by its writer: 5 round trips of 1 ms each, at most 200 writes a second.
    expect(one).toBeLessThanOrEqual(1000 / (5 * SERVICE_MS));
    expect(two).toBeGreaterThan(1.5 * one);
    expect(four).toBeGreaterThanOrEqual(3 * one);
  });
});
