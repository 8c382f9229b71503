import { describe, expect, it } from "vitest";
import { resolve as resolveRaw } from "../support/api.ts";
import { Owner, RESOLVER, recording, resolverFetch, verifierFor } from "./support.ts";

/** A clock the test moves by hand, so cache expiry needs no waiting. */
function clock(start = Date.now()) {
  let now = start;
  return { now: () => now, advance: (seconds: number) => (now += seconds * 1000) };
}

describe("freshness: cache headers, ETags and the consequence policy", () => {
  it("lower consequence reuses a copy within the resolver's max-age, then revalidates with If-None-Match (304)", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const raw = await resolveRaw(id);
    const maxAge = Number(/max-age=(\d+)/.exec((await resolverHeaders(id)).get("cache-control") ?? "")?.[1]);
    expect(maxAge).toBeGreaterThan(0);

    const time = clock();
    const { fetch, calls } = recording();
    const verifier = verifierFor({ fetch, now: time.now });
    const first = await verifier.verify(id, { consequence: "lower" });
    time.advance(maxAge / 2);
    const second = await verifier.verify(id, { consequence: "lower" });
    expect(first.source).toMatchObject({ from_cache: false, etag: `"${raw.record.digest}"` });
    expect(second.source).toMatchObject({ from_cache: true, attempts: 0, age_seconds: maxAge / 2 });
    expect(calls).toHaveLength(1);

    time.advance(maxAge);
    const third = await verifier.verify(id, { consequence: "lower" });
    expect(calls).toHaveLength(2);
    expect(calls[1]?.headers.get("if-none-match")).toBe(`"${raw.record.digest}"`);
    expect(calls[1]?.status).toBe(304);
    expect(third).toMatchObject({ outcome: "ok", source: { revalidated: true, from_cache: false, age_seconds: 0 } });
  });

  it("a resolve() caller cannot declare a cached copy current: higher still asks the resolver", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const raw = await resolveRaw(id);
    const { fetch, calls } = recording();
    const verifier = verifierFor({ fetch });
    expect((await verifier.resolve(id)).outcome).toBe("resolved");
    // Only a checked status token may say a copy is current; an option claiming it is not one.
    const claim = { record_version: raw.record.record_version, digest: raw.record.digest };
    const options = { consequence: "higher", currentAs: claim } as Parameters<typeof verifier.resolve>[1];
    const result = await verifier.resolve(id, options);
    expect(result).toMatchObject({ outcome: "resolved", source: { from_cache: false } });
    expect(calls).toHaveLength(2);
  });

  it("changing context re-resolves every time and sees a suspension at once", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const { fetch, calls } = recording();
    const verifier = verifierFor({ fetch });
    expect((await verifier.verify(id, { consequence: "changing" })).outcome).toBe("ok");
    expect((await verifier.verify(id, { consequence: "changing" })).outcome).toBe("ok");
    expect(calls.map((c) => c.status)).toEqual([200, 304]);

    await owner.state(id, { lifecycle: "suspended" });
    // Within max-age a lower-consequence check keeps using its copy (the resolver's own policy)...
    expect((await verifier.verify(id, { consequence: "lower" })).outcome).toBe("ok");
    // ...while a changing context re-resolves: the ETag no longer matches, so the new record arrives.
    const after = await verifier.verify(id, { consequence: "changing" });
    expect(after).toMatchObject({ outcome: "state_not_operative", state: { lifecycle: "suspended" } });
    expect(calls.at(-1)?.status).toBe(200);
  });

  it("higher consequence re-checks immediately with an unconditional request", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const { fetch, calls } = recording();
    const verifier = verifierFor({ fetch });
    await verifier.verify(id);
    const result = await verifier.verify(id, { consequence: "higher" });
    expect(result.source).toMatchObject({ from_cache: false, revalidated: false, attempts: 1 });
    // The record, unconditionally, then its current status token (docs/verifier.md, Current proof).
    expect(calls).toHaveLength(3);
    expect(calls[1]?.headers.has("if-none-match")).toBe(false);
    expect(calls[1]?.status).toBe(200);
    expect(calls[2]?.url).toBe(`https://resolver.test/api/p/${id}/status`);
    expect(calls[2]?.status).toBe(200);
  });

  it("a maximum record age shorter than the cache lifetime forces a re-resolve", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const time = clock();
    const { fetch, calls } = recording();
    const verifier = verifierFor({ fetch, now: time.now });
    await verifier.verify(id);
    time.advance(5);
    await verifier.verify(id, { maxAge: 2 });
    expect(calls).toHaveLength(2);
  });

  it("keeps nothing when caching is turned off", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const { fetch, calls } = recording();
    const verifier = verifierFor({ fetch, cache: false });
    await verifier.verify(id);
    await verifier.verify(id);
    expect(calls.map((c) => [c.status, c.headers.has("if-none-match")])).toEqual([
      [200, false],
      [200, false],
    ]);
  });
});

async function resolverHeaders(id: string): Promise<Headers> {
  const response = await resolverFetch(`${RESOLVER}/api/p/${id}.json`);
  await response.body?.cancel();
  return response.headers;
}
