import { env } from "cloudflare:workers";
import { identityCacheTag, mintIdentityId } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { EdgeCacheModel, storability } from "../../../workers/platform-model/src/edge-cache.ts";
import { PLATFORM_LIMITS } from "../../../workers/platform-model/src/limits.ts";

/** An origin that answers with the given headers and counts its calls; time is the test's own. */
function edge(headers: Record<string, string> = {}, status = 200) {
  const clock = { now: 1_000_000 };
  const calls: Request[] = [];
  const model = new EdgeCacheModel({
    clock: () => clock.now,
    origin: async (request) => {
      calls.push(request);
      return new Response(`answer ${calls.length}`, { status, headers });
    },
  });
  const get = (path = "/api/p/x.json", init: RequestInit = {}) =>
    model.fetch(new Request(`https://edge.test${path}`, init));
  return { model, clock, calls, get };
}

const RECORD_HEADERS = {
  "cache-control": "public, max-age=15",
  "cloudflare-cdn-cache-control": "public, max-age=30, stale-if-error=0",
  "cache-tag": "passport-psp_one",
  etag: '"sha-256:abc"',
};

describe("the platform model's Workers Caching", () => {
  it("stores an answer for its Cloudflare-CDN-Cache-Control lifetime: MISS, then HIT, then EXPIRED", async () => {
    const { clock, calls, get } = edge(RECORD_HEADERS);
    const first = await get();
    expect(first.headers.get("cf-cache-status")).toBe("MISS");
    expect(await first.text()).toBe("answer 1");
    clock.now += 29_000;
    const second = await get();
    expect(second.headers.get("cf-cache-status")).toBe("HIT");
    expect(second.headers.get("age")).toBe("29");
    expect(await second.text()).toBe("answer 1");
    expect(calls).toHaveLength(1);
    // 30 s, not the 15 s of Cache-Control: the edge's own header comes first.
    clock.now += 1_000;
    const third = await get();
    expect(third.headers.get("cf-cache-status")).toBe("EXPIRED");
    expect(await third.text()).toBe("answer 2");
  });

  it("keeps Cache-Tag with the entry and strips it, and the edge's own header, from the answer", async () => {
    const { model, get } = edge(RECORD_HEADERS);
    for (const answer of [await get(), await get()]) {
      expect(answer.headers.get("cache-tag")).toBeNull();
      expect(answer.headers.get("cloudflare-cdn-cache-control")).toBeNull();
      expect(answer.headers.get("cache-control")).toBe("public, max-age=15");
    }
    expect(model.purge({ tags: ["PASSPORT-psp_one"] })).toEqual({ success: true, errors: [] });
    expect((await get()).headers.get("cf-cache-status")).toBe("MISS");
  });

  it("keys answers by path and query", async () => {
    const { get } = edge(RECORD_HEADERS);
    expect((await get("/a?x=1")).headers.get("cf-cache-status")).toBe("MISS");
    expect((await get("/a?x=2")).headers.get("cf-cache-status")).toBe("MISS");
    expect((await get("/a?x=1")).headers.get("cf-cache-status")).toBe("HIT");
  });

  it("honours no-store and private: BYPASS, and every request reaches the Worker", async () => {
    for (const cacheControl of ["no-store", "private, max-age=60", "no-cache"]) {
      const { calls, get } = edge({ "cache-control": cacheControl });
      expect((await get()).headers.get("cf-cache-status")).toBe("BYPASS");
      expect((await get()).headers.get("cf-cache-status")).toBe("BYPASS");
      expect(calls).toHaveLength(2);
    }
  });

  it("bypasses requests with Authorization, even when it holds an answer for the path", async () => {
    const { calls, get } = edge(RECORD_HEADERS);
    await get();
    const withCredentials = await get("/api/p/x.json", { headers: { authorization: "Bearer t" } });
    expect(withCredentials.headers.get("cf-cache-status")).toBe("BYPASS");
    expect(await withCredentials.text()).toBe("answer 2");
    expect(calls[1]?.headers.get("authorization")).toBe("Bearer t");
  });

  it("bypasses answers that set a cookie, and leaves answers without a lifetime DYNAMIC", async () => {
    const cookie = edge({ ...RECORD_HEADERS, "set-cookie": "a=b" });
    expect((await cookie.get()).headers.get("cf-cache-status")).toBe("BYPASS");
    expect((await cookie.get()).headers.get("cf-cache-status")).toBe("BYPASS");
    const plain = edge({ "content-type": "text/plain" });
    expect((await plain.get()).headers.get("cf-cache-status")).toBe("DYNAMIC");
    expect(plain.calls).toHaveLength(1);
  });

  it("reads RFC 9111 lifetimes: s-maxage before max-age for a shared cache", () => {
    expect(storability(200, new Headers({ "cache-control": "public, max-age=15, s-maxage=120" }))).toEqual({
      store: true,
      ttlMs: 120_000,
    });
    expect(storability(200, new Headers({ "cache-control": "max-age=0" }))).toEqual({ store: false, status: "BYPASS" });
    expect(storability(304, new Headers({ "cache-control": "max-age=60" }))).toEqual({
      store: false,
      status: "DYNAMIC",
    });
  });

  it("answers a matching If-None-Match from the cache with 304, and collapses concurrent misses", async () => {
    const { calls, get } = edge(RECORD_HEADERS);
    const [a, b] = await Promise.all([get(), get()]);
    expect(calls).toHaveLength(1);
    expect([a.status, b.status]).toEqual([200, 200]);
    const conditional = await get("/api/p/x.json", { headers: { "if-none-match": 'W/"sha-256:abc"' } });
    expect(conditional.status).toBe(304);
    expect(conditional.headers.get("cf-cache-status")).toBe("HIT");
  });

  it("refuses the 26th purge of a burst as ctx.cache.purge answers a refusal, and refills at 5 a minute", () => {
    const { model, clock } = edge();
    const results = Array.from({ length: 26 }, (_, i) => model.purge({ tags: [`t${i}`] }));
    expect(results.slice(0, 25).every((r) => r.success)).toBe(true);
    const refused = results[25];
    expect(refused).toEqual({ success: false, errors: [{ code: 429, message: expect.stringMatching(/rate limit/) }] });
    expect(PLATFORM_LIMITS.purge).toEqual({ callsPerMinute: 5, bucket: 25, tagsPerCall: 100 });
    // One token every 12 s: none after 11 s, one at 12 s, five a minute.
    clock.now += 11_000;
    expect(model.purge({ tags: ["a"] }).success).toBe(false);
    clock.now += 1_000;
    expect(model.purge({ tags: ["a"] }).success).toBe(true);
    expect(model.purge({ tags: ["a"] }).success).toBe(false);
    clock.now += 60_000;
    const minute = Array.from({ length: 6 }, () => model.purge({ tags: ["a"] }).success);
    expect(minute).toEqual([true, true, true, true, true, false]);
    expect(model.counters).toMatchObject({ purgesAccepted: 31, purgesRefused: 4 });
  });

  it("refuses a purge naming more than 100 tags, without spending the budget", () => {
    const { model } = edge();
    const tags = Array.from({ length: 101 }, (_, i) => `t${i}`);
    expect(model.purge({ tags })).toEqual({ success: false, errors: [{ code: 400, message: expect.any(String) }] });
    expect(model.purgeTokens()).toBe(25);
  });

  it("does not store an answer whose fill began before a purge of its tag", async () => {
    let release: () => void = () => undefined;
    const model = new EdgeCacheModel({
      origin: async () => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return new Response("old", { headers: RECORD_HEADERS });
      },
    });
    const filling = model.fetch(new Request("https://edge.test/r"));
    await new Promise((resolve) => setTimeout(resolve, 5));
    model.purge({ tags: ["passport-psp_one"] });
    release();
    expect((await filling).headers.get("cf-cache-status")).toBe("MISS");
    expect(model.counters.miss).toBe(1);
    // Nothing stored: the next request fills again.
    const again = model.fetch(new Request("https://edge.test/r"));
    await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    expect((await again).headers.get("cf-cache-status")).toBe("MISS");
  });
});

describe("the model's edge in front of the resolver (its Worker and Durable Object)", () => {
  it("answers a record twice, the second time from the cache, until the resolver purges the identity", async () => {
    const id = mintIdentityId();
    const url = `http://resolver.test/api/p/${id}.json`;
    const first = await env.TEST_EDGE.fetch(url);
    expect(first.status).toBe(404);
    expect(first.headers.get("cf-cache-status")).toBe("MISS");
    expect(first.headers.get("cache-tag")).toBeNull();
    await first.arrayBuffer();
    const second = await env.TEST_EDGE.fetch(url);
    expect(second.headers.get("cf-cache-status")).toBe("HIT");
    await second.arrayBuffer();
    // The resolver's purge path, as the control plane calls it: ResolverAdmin -> the model's purge.
    expect(await env.TEST_RESOLVER_ADMIN.purge(id)).toEqual({ ok: true, value: undefined });
    const third = await env.TEST_EDGE.fetch(url);
    expect(third.headers.get("cf-cache-status")).toBe("MISS");
    await third.arrayBuffer();
  });

  it("passes no-store answers through as BYPASS", async () => {
    const health = await env.TEST_EDGE.fetch("http://resolver.test/health");
    expect(health.status).toBe(200);
    expect(health.headers.get("cf-cache-status")).toBe("BYPASS");
    await health.arrayBuffer();
  });

  it("purges by the tag the resolver's answers carry", async () => {
    const result = await env.TEST_EDGE_PURGE.purge({ tags: [identityCacheTag(mintIdentityId())] });
    expect(result).toEqual({ success: true, errors: [] });
  });
});
