import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { D1_FULL_MESSAGE, D1Model, mayGrow, modelledD1 } from "../../workers/platform-model/src/d1.ts";
import { platformModel } from "../../workers/platform-model/src/model.ts";
import { ModelTime } from "../../workers/platform-model/src/model-time.ts";
import { type Body, Caller, resolve } from "../support/api.ts";
import { shardNameOfOrganisation, shardOfOrganisation } from "../support/shards.ts";

const modelled = env.TEST_PLATFORM_MODEL === "on";

describe("the D1 model (docs/platform-model.md)", () => {
  it("counts round trips and how many were in flight at once; local D1 runs them in the order sent", async () => {
    const model = new D1Model();
    const db = modelledD1(env.DB, model);
    const order: number[] = [];
    await Promise.all(
      [1, 2, 3].map((n) =>
        db
          .prepare("SELECT ? AS n")
          .bind(n)
          .first<{ n: number }>()
          .then((row) => order.push(row?.n ?? 0)),
      ),
    );
    expect(order).toEqual([1, 2, 3]);
    expect(model.counters()).toMatchObject({ roundTrips: 3, maxConcurrent: 3, refusals: 0 });
  });

  it("with a service time, holds the database's one writer for it per round trip, and counts the longest wait", async () => {
    const model = new D1Model({ serviceMs: 30 });
    const db = modelledD1(env.DB, model);
    // Prepared first, so the three round trips ask for the writer at one instant even on a loaded
    // machine (preparing beside them once let the third ask 6 ms late and wait only 54 ms).
    const statements = [1, 2, 3].map((n) => db.prepare("SELECT ? AS n").bind(n));
    const started = Date.now();
    await Promise.all(statements.map((statement) => statement.first()));
    // Three round trips one after another: the third starts after two service times.
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(model.counters().maxWaitMs).toBeGreaterThanOrEqual(60);
    // A second database is a second writer: its round trips do not wait for the first's.
    const other = new D1Model({ serviceMs: 30 });
    await modelledD1(env.DB, other).prepare("SELECT 1").first();
    expect(other.counters().maxWaitMs).toBe(0);
  });

  it("in model time, serves round trips in the order of their clients' clocks and moves the clocks, not the real time", async () => {
    const model = new D1Model({ serviceMs: 30_000 });
    const time = new ModelTime();
    const [a, b] = [time.client(), time.client()];
    const [dbA, dbB] = [a, b].map((client) => modelledD1(env.DB, model, client)) as [D1Database, D1Database];
    const started = Date.now();
    await Promise.all([
      (async () => {
        await dbA.prepare("SELECT 1").first();
        await dbA.prepare("SELECT 2").first();
        a.done();
      })(),
      (async () => {
        await dbB.prepare("SELECT 3").first();
        b.done();
      })(),
    ]);
    // a's first [0, 30 s), then b's, which waited 30 s, then a's second, asked for at 30 s.
    expect([a.now, b.now]).toEqual([90_000, 60_000]);
    expect(model.counters()).toMatchObject({ roundTrips: 3, maxWaitMs: 30_000 });
    // Ninety model seconds took none of them in real time.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("accounts the database's size from D1's reports and refuses growing writes past the limit", async () => {
    const model = new D1Model();
    const db = modelledD1(env.DB, model);
    await db.prepare("SELECT 1").run();
    const bytes = model.counters().bytes;
    expect(bytes).toBeGreaterThan(0);
    model.maxBytes = bytes as number;
    const id = `org_${crypto.randomUUID()}`;
    await expect(db.prepare("INSERT INTO organisations (id, name) VALUES (?, 'Full')").bind(id).run()).rejects.toThrow(
      D1_FULL_MESSAGE,
    );
    // A batch with a growing write is refused whole.
    await expect(
      db.batch([
        db.prepare("SELECT 1"),
        db.prepare("INSERT INTO organisations (id, name) VALUES (?, 'Full')").bind(id),
      ]),
    ).rejects.toThrow(D1_FULL_MESSAGE);
    expect(await env.DB.prepare("SELECT id FROM organisations WHERE id = ?").bind(id).first()).toBeNull();
    // Reads and deletes still run.
    expect(await db.prepare("SELECT count(*) AS n FROM organisations").first()).toBeTruthy();
    await db.prepare("DELETE FROM organisations WHERE id = ?").bind(id).run();
    expect(model.counters().refusals).toBe(2);
  });

  it("tells the statements that may grow a database from those that cannot", () => {
    expect(mayGrow("select * from passports")).toBe(false);
    expect(mayGrow("  /* plan */ SELECT 1")).toBe(false);
    expect(mayGrow("with x as (select 1) select * from x")).toBe(false);
    expect(mayGrow("with x as (select 1) insert into t select * from x")).toBe(true);
    expect(mayGrow("delete from outbox where passport_id = ?")).toBe(false);
    expect(mayGrow('insert into "events" values (?)')).toBe(true);
    expect(mayGrow("update passports set version = ?")).toBe(true);
  });
});

describe.runIf(modelled)("the control plane with its database at the size limit", () => {
  it("answers a change with 507 storage-full, writes nothing of it, and still answers reads", async () => {
    const admin = await Caller.create("admin");
    const existing: Body = await admin.createPassport({ display_name: "Before the limit" });
    const model = platformModel.d1(await shardNameOfOrganisation(admin.organisation));
    const shard = await shardOfOrganisation(admin.organisation);
    const events = () =>
      shard
        .prepare("SELECT count(*) AS n FROM events WHERE passport_id = ?")
        .bind(existing.identity_id)
        .first<{ n: number }>("n");
    const eventsBefore = await events();
    const passports = () =>
      shard
        .prepare("SELECT count(*) AS n FROM passports WHERE organisation_id = ?")
        .bind(admin.organisation)
        .first<number>("n");
    const passportsBefore = await passports();
    const limit = model.maxBytes;
    model.maxBytes = 1;
    try {
      const refused = await admin.request("POST", "/v1/passports", {
        organisation_id: admin.organisation,
        family: "api",
        display_name: "After the limit",
      });
      expect(refused.status).toBe(507);
      expect(refused.headers.get("content-type")).toBe("application/problem+json");
      expect(await refused.json()).toMatchObject({ type: "urn:svc:passport:problem:storage-full", status: 507 });

      const change = await admin.request("PATCH", `/v1/passports/${existing.identity_id}`, { display_name: "Changed" });
      expect(change.status).toBe(507);

      // Nothing half-written: no passport, no event, no outbox row.
      expect(await passports()).toBe(passportsBefore);
      expect(await events()).toBe(eventsBefore);
      expect(
        await shard
          .prepare("SELECT count(*) AS n FROM outbox WHERE passport_id = ?")
          .bind(existing.identity_id)
          .first<number>("n"),
      ).toBe(0);

      // Reads still work, and say what was there before: the API's and the resolver's.
      const read: Body = await admin.json("GET", `/v1/passports/${existing.identity_id}`);
      expect(read.display_name).toBe("Before the limit");
      expect((await admin.json("GET", `/v1/passports?organisation_id=${admin.organisation}`)).items).toHaveLength(1);
      const { status, record } = await resolve(existing.identity_id);
      expect(status).toBe(200);
      expect(record.display_name).toBe("Before the limit");
      expect(model.counters().refusals).toBeGreaterThanOrEqual(2);
    } finally {
      model.maxBytes = limit;
    }
    // Once there is room again, the change goes through.
    await admin.json("PATCH", `/v1/passports/${existing.identity_id}`, { display_name: "Changed" });
  });
});
