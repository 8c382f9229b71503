import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { type HistoryEntry, historyKey, type RpcOutcome, type SnapshotMetadata, snapshotKey } from "@passport/domain";
import { beforeEach, describe, expect, it } from "vitest";
import {
  KEEPER_BUDGET,
  type PurgeBudget,
  purgePriority,
  SECOND_PURGE_DELAY_MS,
  SECURITY_RESERVE,
} from "../../workers/control/src/publication/purge-budget.ts";
import { PLATFORM_LIMITS } from "../../workers/platform-model/src/limits.ts";
import { TokenBucket } from "../../workers/platform-model/src/token-bucket.ts";
import { Caller } from "../support/api.ts";
import { everyShard } from "../support/shards.ts";

/**
 * The purge keeper (docs/freshness.md, Purges) with a stand-in for the resolver's
 * `ResolverAdmin.purge` and the keeper's clock in the test's hands: every call it makes is
 * recorded, and `refuse` makes the platform refuse them as Workers Caching refuses an exhausted
 * budget.
 */
const keeper = () => env.PURGE_BUDGET.getByName("purges");
const clock = { now: 0 };
const calls: string[][] = [];
let refuse = false;

/** The resolver's admin entry point as the keeper calls it: a refusal is an answer (`RpcOutcome`). */
const resolver = {
  purge: async (...identityIds: string[]): Promise<RpcOutcome<void>> => {
    if (refuse) return { ok: false, error: "edge cache purge was refused (429: purge rate limit exceeded)" };
    calls.push(identityIds);
    return { ok: true, value: undefined };
  },
} as unknown as Env["RESOLVER"];

beforeEach(async () => {
  clock.now = Date.now();
  calls.length = 0;
  refuse = false;
  await runInDurableObject(keeper(), async (instance: PurgeBudget, state) => {
    (instance as unknown as { env: Env }).env = { ...env, RESOLVER: resolver };
    instance.clock = () => clock.now;
    // The test moves the keeper's clock and flushes it itself; its alarm, armed on the real clock,
    // would flush between a test's steps (a passport's publications are a second apart).
    (instance as unknown as { alarm: () => Promise<void> }).alarm = async () => {};
    state.storage.sql.exec("DELETE FROM purge_queue");
    state.storage.sql.exec("DELETE FROM purge_bucket");
    await state.storage.deleteAlarm();
  });
});

const flush = () => runInDurableObject(keeper(), (instance: PurgeBudget) => instance.flush());
const alarm = () => runInDurableObject(keeper(), (_instance, state) => state.storage.getAlarm());
const keeperState = () => runInDurableObject(keeper(), (instance: PurgeBudget) => instance.state());

async function publicationOf(caller: Caller, id: string) {
  const view = await caller.json<{ record_version: number; publication: { status: string } }>(
    "GET",
    `/v1/passports/${id}`,
  );
  return { version: view.record_version, status: view.publication.status };
}

async function outboxRows(ids: string[]): Promise<number> {
  const placeholders = ids.map(() => "?").join(", ");
  let n = 0;
  for (const shard of everyShard()) {
    const row = await shard
      .prepare(`SELECT count(*) AS n FROM outbox WHERE passport_id IN (${placeholders})`)
      .bind(...ids)
      .first<{ n: number }>();
    n += row?.n ?? 0;
  }
  return n;
}

/** The snapshot's version and the history versions KV holds for one passport, in key order. */
async function publishedInKv(id: string): Promise<{ snapshot: number | undefined; history: number[] }> {
  const snapshot = await env.SNAPSHOTS.getWithMetadata<SnapshotMetadata>(snapshotKey(id));
  const history: number[] = [];
  for (let version = 1; ; version++) {
    const entry = await env.SNAPSHOTS.get<HistoryEntry>(historyKey(id, version), "json");
    if (!entry) break;
    history.push(entry.record_version);
  }
  return { snapshot: snapshot.metadata?.record_version, history };
}

describe("the purge keeper: purges within the edge's budget, never in a publication's way", () => {
  it("ranks withdrawals of trust (revocation, suspension, a lapsed binding, a removed key) above cosmetic changes", () => {
    for (const kinds of [
      ["state.lifecycle_changed"],
      ["display.updated", "binding.lapsed"],
      ["binding.removed"],
      ["evidence.withdrawn"],
      ["authority.expired"],
      ["duplicate.retired"],
    ]) {
      expect(purgePriority(kinds), kinds.join()).toBe("security");
    }
    for (const kinds of [["display.updated"], ["passport.created"], ["state.reactivated", "binding.verified"], []]) {
      expect(purgePriority(kinds), kinds.join()).toBe("routine");
    }
  });

  it("purges a publication's identity at once and again once K has passed", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    await admin.json("PATCH", `/v1/passports/${id}`, { display_name: "Renamed" });
    await flush();
    // The create's purge and the change's coalesce into one call.
    expect(calls).toEqual([[id]]);
    expect((await keeperState()).queued).toEqual({ security: 0, routine: 0, later: 1 });

    clock.now += SECOND_PURGE_DELAY_MS;
    await flush();
    expect(calls).toEqual([[id], [id]]);
    // Done: nothing is left, and no further purge runs.
    expect((await keeperState()).queued).toEqual({ security: 0, routine: 0, later: 0 });
    clock.now += SECOND_PURGE_DELAY_MS;
    await flush();
    expect(calls).toEqual([[id], [id]]);
  });

  it("coalesces a burst of publications into one call now and one second purge for the newest", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    await admin.json("PATCH", `/v1/passports/${id}`, { display_name: "One" });
    clock.now += 20_000;
    await admin.json("PATCH", `/v1/passports/${id}`, { display_name: "Two" });
    await admin.json("PATCH", `/v1/passports/${id}`, { display_name: "Three" });
    await flush();
    expect(calls).toEqual([[id]]);
    // The second purge waits for K after the newest publication, not the first.
    clock.now += SECOND_PURGE_DELAY_MS - 20_000;
    await flush();
    expect(calls).toHaveLength(1);
    clock.now += 20_000;
    await flush();
    expect(calls).toEqual([[id], [id]]);
  });

  it("keeps a refused purge owed, treats the budget as empty, and purges once it has refilled", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    refuse = true;
    await flush();
    const refused = await keeperState();
    expect(refused).toMatchObject({ refusals: 1, tokens: 0, queued: { routine: 1 } });
    expect(calls).toEqual([]);
    // The retry is the keeper's own alarm, so nothing waits for another publication to come.
    expect(await alarm()).not.toBeNull();
    // A routine purge waits until the bucket is above the security reserve again.
    refuse = false;
    clock.now += SECURITY_RESERVE * KEEPER_BUDGET.refillEveryMs;
    await flush();
    expect(calls).toEqual([]);
    clock.now += KEEPER_BUDGET.refillEveryMs;
    await flush();
    // One call covers the first purge and the second, due by now.
    expect(calls).toEqual([[id]]);
    expect((await keeperState()).queued).toEqual({ security: 0, routine: 0, later: 0 });
    expect(await alarm()).toBeNull();
  });

  it("loses and reorders no publication while every purge is refused", async () => {
    refuse = true;
    const admin = await Caller.create("admin");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await admin.createPassport()).identity_id);
    for (const [round, name] of ["One", "Two", "Three"].entries()) {
      for (const id of ids) {
        await admin.json("PATCH", `/v1/passports/${id}`, { display_name: `${name} ${id}` });
        // The keeper tries between publications and is refused every time.
        await flush();
      }
      if (round === 1) await admin.json("PATCH", `/v1/passports/${ids[0]}/state`, { lifecycle: "suspended" });
    }
    expect((await keeperState()).refusals).toBeGreaterThan(0);
    expect(calls).toEqual([]);
    for (const id of ids) {
      const { version, status } = await publicationOf(admin, id);
      expect(status).toBe("published");
      const kv = await publishedInKv(id);
      expect(kv.snapshot).toBe(version);
      expect(kv.history).toEqual(Array.from({ length: version }, (_, i) => i + 1));
    }
    expect(await outboxRows(ids)).toBe(0);
    // Every identity is still owed its purge, the suspension's first.
    expect((await keeperState()).queued).toEqual({ security: 1, routine: 2, later: 3 });
    refuse = false;
    clock.now += 6 * KEEPER_BUDGET.refillEveryMs;
    await flush();
    expect(calls[0]?.[0]).toBe(ids[0]);
    expect(new Set(calls.flat())).toEqual(new Set(ids));
  });

  it("publishes 40 changes at once, spreads their purges within the budget, and purges a revocation queued behind them first", async () => {
    const admin = await Caller.create("admin");
    const refusalsBefore = (await keeperState()).refusals;
    // The budget is mostly spent (a burst elsewhere): down to the security reserve.
    await runInDurableObject(keeper(), (_instance, state) => {
      state.storage.sql.exec(
        "INSERT OR REPLACE INTO purge_bucket (id, tokens, updated_at) VALUES (1, ?, ?)",
        SECURITY_RESERVE,
        clock.now,
      );
    });
    const started = Date.now();
    const created = await Promise.all(
      Array.from(
        { length: 40 },
        (_, i) =>
          admin.createPassport({ display_name: `Burst ${i}` }) as Promise<{
            identity_id: string;
            publication: { status: string };
          }>,
      ),
    );
    const ids = created.map((view) => view.identity_id);
    const published = created.map((view) => view.publication.status);
    const burstMs = Date.now() - started;
    expect(published).toEqual(Array(40).fill("published"));
    await flush();
    // Routine purges wait above the reserve: none yet.
    expect(calls).toEqual([]);
    const [revoked] = ids;
    await admin.json("PATCH", `/v1/passports/${revoked}/state`, { lifecycle: "revoked" });
    await flush();
    // The revocation goes at once, from the reserve, and the cosmetic ones ride along in its call.
    expect(calls).toHaveLength(1);
    expect(calls[0]?.[0]).toBe(revoked);
    expect(new Set(calls[0])).toEqual(new Set(ids));

    // Over the next minutes the keeper's calls never exceed its bucket and refill.
    const times: number[] = [clock.now];
    for (let step = 0; step < 40; step++) {
      clock.now += 5_000;
      const before = calls.length;
      await flush();
      if (calls.length > before) times.push(clock.now);
    }
    expect((await keeperState()).refusals).toBe(refusalsBefore);
    // The platform's own bucket, as spent as the keeper's when the burst began, allows every call.
    let at = times[0] as number;
    const platform = new TokenBucket(
      PLATFORM_LIMITS.purge.bucket,
      60_000 / PLATFORM_LIMITS.purge.callsPerMinute,
      () => at,
    );
    for (let i = SECURITY_RESERVE; i < PLATFORM_LIMITS.purge.bucket; i++) platform.take();
    for (const time of times) {
      at = time;
      expect(platform.take()).toBe(true);
    }
    // Each identity's second purge, K after its newest publication, once the reserve allows it.
    expect(new Set(calls.slice(1).flat())).toEqual(new Set(ids));
    console.log(
      JSON.stringify({
        event: "purge_keeper_burst",
        publications: 40,
        burst_ms: burstMs,
        purge_calls: calls.length,
        call_offsets_s: times.map((t) => Math.round((t - (times[0] as number)) / 1000)),
      }),
    );
  });
});
