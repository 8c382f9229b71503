import { describe, expect, it } from "vitest";
import type { CacheEntry, RecordCacheStore } from "../../packages/verifier/src/index.ts";
import { resolve as resolveRaw } from "../support/api.ts";
import { Owner, recording, verifierFor } from "./support.ts";

/** A cache kept as JSON text behind promises, as KV or the Cache API keep it. */
class JsonCache implements RecordCacheStore {
  readonly text = new Map<string, string>();
  async get(url: string): Promise<CacheEntry | undefined> {
    const text = this.text.get(url);
    return text === undefined ? undefined : (JSON.parse(text) as CacheEntry);
  }
  async set(url: string, entry: CacheEntry): Promise<void> {
    this.text.set(url, JSON.stringify(entry));
  }
  async delete(url: string): Promise<void> {
    this.text.delete(url);
  }
  /** Rewrites the one entry kept, as a cache that changes its mind about a copy would. */
  edit(change: (entry: CacheEntry) => void): CacheEntry {
    const [url, text] = [...this.text][0] ?? [];
    if (!url || !text) throw new Error("nothing cached");
    const entry = JSON.parse(text) as CacheEntry;
    change(entry);
    this.text.set(url, JSON.stringify(entry));
    return entry;
  }
}

function clock(start = Date.now()) {
  let now = start;
  return { now: () => now, advance: (seconds: number) => (now += seconds * 1000) };
}

async function cachedPassport() {
  const owner = await Owner.create();
  const { id } = await owner.apiPassport();
  const raw = await resolveRaw(id);
  const time = clock();
  const cache = new JsonCache();
  const { fetch, calls } = recording();
  const verifier = verifierFor({ fetch, now: time.now, cache });
  expect((await verifier.verify(id, { consequence: "lower" })).outcome).toBe("ok");
  return { id, raw, time, cache, calls, verifier };
}

describe("a record cache of the consumer's own", () => {
  it("keeps the record as JSON with its stale and expired times, and reuses it while fresh", async () => {
    const { id, time, cache, calls, verifier } = await cachedPassport();
    const entry = cache.edit(() => {});
    expect(entry.maxAge).toBeGreaterThan(0);
    expect(entry.stale).toBe(entry.confirmedAt + ((entry.maxAge ?? 0) - entry.ageAtConfirmation) * 1000);
    expect(entry.expired).toBeGreaterThan(entry.stale);
    expect(entry.proof?.signature).toBe("verified");

    time.advance(1);
    const again = await verifier.verify(id, { consequence: "lower" });
    expect(again).toMatchObject({ outcome: "ok", source: { from_cache: true, attempts: 0 } });
    expect(calls).toHaveLength(1);
  });

  it("a copy past its stale time is revalidated with its ETag, and stored again with new times", async () => {
    const { id, raw, time, cache, calls, verifier } = await cachedPassport();
    const before = cache.edit((entry) => {
      entry.stale = time.now();
    });
    time.advance(1);
    const again = await verifier.verify(id, { consequence: "lower" });
    expect(again).toMatchObject({ outcome: "ok", source: { from_cache: false, revalidated: true } });
    expect(calls).toHaveLength(2);
    expect(calls[1]?.headers.get("if-none-match")).toBe(`"${raw.record.digest}"`);
    expect(calls[1]?.status).toBe(304);
    expect(cache.edit(() => {}).stale).toBeGreaterThan(before.stale);
  });

  it("a copy past its expired time is not used at all: the record is read afresh, unconditionally", async () => {
    const { id, time, cache, calls, verifier } = await cachedPassport();
    cache.edit((entry) => {
      entry.stale = time.now() + 3_600_000;
      entry.expired = time.now();
    });
    time.advance(1);
    const again = await verifier.verify(id, { consequence: "lower" });
    expect(again).toMatchObject({ outcome: "ok", source: { from_cache: false, revalidated: false, attempts: 1 } });
    expect(calls).toHaveLength(2);
    expect(calls[1]?.headers.get("if-none-match")).toBeNull();
    expect(calls[1]?.status).toBe(200);
  });
});
