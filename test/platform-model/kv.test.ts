import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { KvWriteLimit, modelledKv } from "../../workers/platform-model/src/kv.ts";

/** A clock the test moves by hand, as a simulation in simulated time would. */
function manualClock(start = 1_000_000) {
  let now = start;
  return { clock: () => now, advance: (ms: number) => (now += ms) };
}

describe("the KV model: one write a second to one key (docs/platform-model.md)", () => {
  it("refuses a second write to a key within a second, as the platform does, and takes it after", async () => {
    const { clock, advance } = manualClock();
    const limit = new KvWriteLimit(clock);
    const kv = modelledKv(env.SNAPSHOTS, limit);
    const key = `model:${crypto.randomUUID()}`;

    await kv.put(key, "first");
    advance(999);
    await expect(kv.put(key, "second")).rejects.toThrow("KV PUT failed: 429 Too Many Requests");
    await expect(kv.delete(key)).rejects.toThrow("KV DELETE failed: 429 Too Many Requests");
    // Refused writes write nothing.
    expect(await env.SNAPSHOTS.get(key)).toBe("first");
    // Another key is not limited by this one.
    await kv.put(`${key}:other`, "x");

    advance(1);
    await kv.put(key, "third");
    expect(await env.SNAPSHOTS.get(key)).toBe("third");
    advance(1000);
    await kv.delete(key);
    expect(await env.SNAPSHOTS.get(key)).toBeNull();

    expect(limit.counters()).toEqual({ writes: 4, refusals: 2, maxWritesPerKeyPerSecond: 3, busiestKey: key });
  });

  it("refuses the second of two writes started together", async () => {
    const limit = new KvWriteLimit(manualClock().clock);
    const kv = modelledKv(env.SNAPSHOTS, limit);
    const key = `model:${crypto.randomUUID()}`;
    const results = await Promise.allSettled([kv.put(key, "a"), kv.put(key, "b")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect(await env.SNAPSHOTS.get(key)).toBe("a");
  });

  it("leaves reads, lists and metadata to the namespace", async () => {
    const limit = new KvWriteLimit(manualClock().clock);
    const kv = modelledKv(env.SNAPSHOTS, limit);
    const prefix = `model:${crypto.randomUUID()}:`;
    await kv.put(`${prefix}a`, "1", { metadata: { n: 1 } });
    expect(await kv.getWithMetadata(`${prefix}a`)).toMatchObject({ value: "1", metadata: { n: 1 } });
    expect((await kv.list({ prefix })).keys.map((k) => k.name)).toEqual([`${prefix}a`]);
    expect(limit.counters().writes).toBe(1);
  });
});
