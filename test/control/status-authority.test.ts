// The status path off the write database (docs/freshness.md, Status token): a passport's
// publication sequencer answers status from its own storage, where each publication it runs
// records what it published, and reads D1 only to recover. Every D1 round trip of the status path
// is counted here, over many passports and requests.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { StatusAuthorityApi } from "@passport/domain";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import { database } from "../../workers/control/src/db/client.ts";
import type { PublishEnv } from "../../workers/control/src/publication/publish.ts";
import { readCurrentState } from "../../workers/control/src/publication/queries.ts";
import { STATE_RECOVERY_MS } from "../../workers/control/src/publication/sequencer.ts";
import { PLATFORM_LIMITS } from "../../workers/platform-model/src/limits.ts";
import { Caller } from "../support/api.ts";
import { shardOfIdentity } from "../support/shards.ts";

/** How long the edge shares a status answer (STATUS_EDGE_SECONDS of the resolver's status route). */
const STATUS_EDGE_SECONDS = 1;

type Counter = { reads: number };
type WithEnv = { env: PublishEnv };

/**
 * A D1 binding that counts its round trips: each batch, and each statement run on its own. It
 * wraps statements rather than patching them, so it can stand in front of any D1 binding (the
 * platform model's included); a batch is given back the statements it wraps.
 */
function countedD1(db: D1Database, counter: Counter): D1Database {
  const inner = new WeakMap<object, D1PreparedStatement>();
  const counted = (statement: D1PreparedStatement): D1PreparedStatement => {
    const run =
      <M extends "first" | "all" | "run" | "raw">(method: M) =>
      (...args: unknown[]) => {
        counter.reads++;
        return (statement[method] as (...a: unknown[]) => unknown)(...args);
      };
    const wrapper = {
      first: run("first"),
      all: run("all"),
      run: run("run"),
      raw: run("raw"),
      bind: (...values: unknown[]) => counted(statement.bind(...values)),
    } as unknown as D1PreparedStatement;
    inner.set(wrapper, statement);
    return wrapper;
  };
  return {
    prepare: (query: string) => counted(db.prepare(query)),
    batch: (statements: D1PreparedStatement[]) => {
      counter.reads++;
      return db.batch(statements.map((statement) => inner.get(statement) ?? statement));
    },
    exec: (query: string) => {
      counter.reads++;
      return db.exec(query);
    },
    withSession: () => {
      throw new Error("the status path opens no session");
    },
    dump: () => db.dump(),
  } as unknown as D1Database;
}

const sequencer = (id: string) => env.PUBLICATION_SEQUENCER.getByName(id);
const authority = (id: string) => sequencer(id) as unknown as StatusAuthorityApi;

/** The environment's shard bindings by name (D1_SHARDS, docs/sharding.md). */
type ShardBindings = Record<string, D1Database>;

function shardNames(object: WithEnv): string[] {
  return JSON.parse((object.env as unknown as { D1_SHARDS: string }).D1_SHARDS) as string[];
}

/** Has each passport's sequencer count its D1 round trips, in every shard, into `counter` until the returned restore. */
async function countD1Reads(ids: string[], counter: Counter): Promise<() => Promise<void>> {
  const originals = new Map<string, ShardBindings>();
  for (const id of ids) {
    await runInDurableObject(sequencer(id), (instance) => {
      const object = instance as unknown as WithEnv;
      const bindings = object.env as unknown as ShardBindings;
      const saved: ShardBindings = {};
      const counted: ShardBindings = {};
      for (const name of shardNames(object)) {
        saved[name] = bindings[name] as D1Database;
        counted[name] = countedD1(bindings[name] as D1Database, counter);
      }
      originals.set(id, saved);
      object.env = { ...object.env, ...counted };
    });
  }
  return async () => {
    for (const id of ids) {
      await runInDurableObject(sequencer(id), (instance) => {
        const object = instance as unknown as WithEnv;
        object.env = { ...object.env, ...originals.get(id) };
      });
    }
  };
}

/** Holds the sequencer's KV writes until `release`: a publication stays under way meanwhile. */
async function stallSnapshotWrites(id: string) {
  let release: () => void = () => {};
  let writing: () => void = () => {};
  const stalled = new Promise<void>((resolve) => {
    release = resolve;
  });
  const started = new Promise<void>((resolve) => {
    writing = resolve;
  });
  let original: KVNamespace | undefined;
  await runInDurableObject(sequencer(id), (instance) => {
    const object = instance as unknown as WithEnv;
    const kv = object.env.SNAPSHOTS;
    original = kv;
    const put = async (...args: Parameters<KVNamespace["put"]>) => {
      writing();
      await stalled;
      return kv.put(...args);
    };
    const stalling = new Proxy(kv, {
      get: (target, key) => {
        if (key === "put") return put;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    object.env = { ...object.env, SNAPSHOTS: stalling };
  });
  const restore = () =>
    runInDurableObject(sequencer(id), (instance) => {
      const object = instance as unknown as WithEnv;
      object.env = { ...object.env, SNAPSHOTS: original as KVNamespace };
    });
  return { started, release: () => release(), restore };
}

function claimsOf(token: string): Record<string, unknown> {
  const payload = token.split(".")[1] ?? "";
  const { iat: _, exp: __, ...claims } = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
  return claims;
}

async function statusClaims(id: string): Promise<Record<string, unknown>> {
  const answer = await authority(id).status(id);
  if (!answer.found) throw new Error(`no status for ${id}`);
  return claimsOf(answer.token);
}

/** What D1, the source of truth, says right now, in the token's terms. */
async function truth(id: string): Promise<Record<string, unknown>> {
  const { found: _, ...state } = (await readCurrentState(database(await shardOfIdentity(id)), id)) as {
    found: boolean;
  };
  return state;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("status from the sequencer's own storage", () => {
  it("the long tail: 24 published passports asked 40 times each read D1 not once, and say what D1 says", async () => {
    const owner = await Caller.create("admin");
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) ids.push((await owner.createPassport({ display_name: `Tail ${i}` })).identity_id);
    // A third suspended, a third renamed: the state each publication recorded is the new one.
    for (const [i, id] of ids.entries()) {
      if (i % 3 === 0) await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "suspended", reason: "x" });
      if (i % 3 === 1) await owner.json("PATCH", `/v1/passports/${id}`, { display_name: `Renamed ${i}` });
    }
    const counter = { reads: 0 };
    const restore = await countD1Reads(ids, counter);
    try {
      for (let round = 0; round < 40; round++) {
        const answers = await Promise.all(ids.map((id) => authority(id).status(id)));
        expect(answers.every((answer) => answer.found && !answer.pending)).toBe(true);
      }
      // Through the resolver's route as well: the route adds no read of its own.
      for (const id of ids.slice(0, 4)) {
        const response = await env.TEST_RESOLVER.fetch(`http://resolver.test/api/p/${id}/status`);
        expect(response.status).toBe(200);
      }
      expect(counter.reads).toBe(0);
    } finally {
      await restore();
    }
    for (const id of ids) expect(await statusClaims(id)).toEqual(await truth(id));
    expect(await statusClaims(ids[0] as string)).toMatchObject({ lifecycle: "suspended", record_version: 2 });
  });

  it("while a publication runs, requests share one D1 read per publish call and say pending with the committed state", async () => {
    const owner = await Caller.create("admin");
    const { identity_id: id } = await owner.createPassport();
    const counter = { reads: 0 };
    const restoreDb = await countD1Reads([id], counter);
    const stall = await stallSnapshotWrites(id);
    try {
      const revoking = owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "revoked", reason: "compromise" });
      await stall.started;
      const before = counter.reads;
      const during = await Promise.all(Array.from({ length: 20 }, () => statusClaims(id)));
      // Revoked and pending at once, from one read of D1 shared by the 20 requests.
      expect(counter.reads - before).toBe(1);
      for (const claims of during) {
        expect(claims).toMatchObject({
          lifecycle: "revoked",
          publication: "pending",
          record_version: 1,
          pending_version: 2,
        });
      }
      stall.release();
      await revoking;
      const reads = counter.reads;
      expect(await statusClaims(id)).toMatchObject({
        lifecycle: "revoked",
        publication: "published",
        record_version: 2,
      });
      // The publication recorded what it published: no read after it.
      expect(counter.reads).toBe(reads);
    } finally {
      stall.release();
      await stall.restore();
      await restoreDb();
    }
    expect(await statusClaims(id)).toEqual(await truth(id));
  });

  it("recovers from D1: once for an object that never saw a publication, then again once its record is older than R", async () => {
    const owner = await Caller.create("admin");
    // The creation's publish call never reaches the sequencer (a reset object): its storage is empty.
    const unreachable = {
      getByName: () => ({ publish: () => Promise.reject(new Error("sequencer reset")) }),
    } as unknown as typeof env.PUBLICATION_SEQUENCER;
    const created = await app.request(
      "http://control.test/v1/passports",
      {
        method: "POST",
        headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
        body: JSON.stringify({ family: "api", organisation_id: owner.organisation, display_name: "Lost call" }),
      },
      { ...env, PUBLICATION_SEQUENCER: unreachable },
    );
    const { identity_id: id } = (await created.json()) as { identity_id: string };
    const counter = { reads: 0 };
    const restore = await countD1Reads([id], counter);
    try {
      const first = await Promise.all(Array.from({ length: 20 }, () => statusClaims(id)));
      expect(counter.reads).toBe(1);
      expect(first[0]).toMatchObject({ publication: "pending", pending_version: 1 });
      for (let i = 0; i < 20; i++) await statusClaims(id);
      expect(counter.reads).toBe(1);

      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Date.now() + STATE_RECOVERY_MS + 1000);
      await Promise.all(Array.from({ length: 10 }, () => statusClaims(id)));
      expect(counter.reads).toBe(2);
    } finally {
      vi.useRealTimers();
      await restore();
    }
  });
});

/**
 * A stand-in for Workers Caching in front of the resolver, as far as the status route needs it:
 * one cache per location, keeping an answer for the `max-age` of its `Cloudflare-CDN-Cache-Control`
 * and collapsing concurrent misses for one URL into one request to the Worker.
 */
function edgeLocation(origin: (url: string) => Promise<Response>) {
  const cached = new Map<string, { until: number; answer: Promise<{ status: number; body: string }> }>();
  return (url: string, now: number) => {
    const hit = cached.get(url);
    if (hit && now < hit.until) return hit.answer;
    const answer = origin(url).then(async (response) => {
      const maxAge = /max-age=(\d+)/.exec(response.headers.get("cloudflare-cdn-cache-control") ?? "")?.[1];
      if (maxAge === undefined) cached.delete(url);
      return { status: response.status, body: await response.text() };
    });
    cached.set(url, { until: now + STATUS_EDGE_SECONDS * 1000, answer });
    return answer;
  };
}

describe("one popular passport at the edge", () => {
  it("its object is asked at most once a second per location, below the Durable Object soft limit", async () => {
    const owner = await Caller.create("admin");
    const { identity_id: id } = await owner.createPassport({ display_name: "Popular" });
    const response = await env.TEST_RESOLVER.fetch(`http://resolver.test/api/p/${id}/status`);
    expect(response.headers.get("cloudflare-cdn-cache-control")).toBe(
      `public, max-age=${STATUS_EDGE_SECONDS}, stale-if-error=0`,
    );
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("cache-tag")).toBeNull();

    // Cloudflare's network has about 330 locations; every one of them asks, 12 clients each a second.
    const LOCATIONS = 330;
    const SECONDS = 3;
    let reachedObject = 0;
    const origin = (url: string) => {
      reachedObject++;
      return env.TEST_RESOLVER.fetch(url);
    };
    const locations = Array.from({ length: LOCATIONS }, () => edgeLocation(origin));
    const counter = { reads: 0 };
    const restore = await countD1Reads([id], counter);
    let answered = 0;
    try {
      for (let second = 0; second < SECONDS; second++) {
        const now = second * 1000;
        const before = reachedObject;
        const answers = await Promise.all(
          locations.flatMap((location) =>
            Array.from({ length: 12 }, () => location(`http://resolver.test/api/p/${id}/status`, now)),
          ),
        );
        answered += answers.length;
        expect(answers.every((answer) => answer.status === 200)).toBe(true);
        expect(reachedObject - before).toBeLessThanOrEqual(LOCATIONS);
        expect(reachedObject - before).toBeLessThan(PLATFORM_LIMITS.durableObjects.softLimitPerSecond);
      }
    } finally {
      await restore();
    }
    expect(answered).toBe(LOCATIONS * 12 * SECONDS);
    expect(reachedObject).toBe(LOCATIONS * SECONDS);
    expect(counter.reads).toBe(0);
  });
});
