import { exports } from "cloudflare:workers";
import { mintIdentityId } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { BASE } from "./support/records.ts";

/**
 * The query limit through the real local Rate Limiting binding, with wrangler.toml's value (300 a
 * minute per client, docs/limits.md). Its windows follow the wall clock, so a run that straddles
 * a boundary is let through up to twice the limit before it is refused.
 */
const LIMIT = 300;

function freshAddress(): string {
  const [a = 0, b = 0] = crypto.getRandomValues(new Uint16Array(2));
  return `2001:db8::${a.toString(16)}:${b.toString(16)}`;
}

const get = (path: string, address: string) =>
  exports.default.fetch(`${BASE}${path}`, { headers: { "cf-connecting-ip": address } });

describe("the query routes' rate limit", () => {
  it("refuses a client over the limit on every query route, but never on the record route", async () => {
    const address = freshAddress();
    let accepted = 0;
    let refused: Response | undefined;
    for (; accepted <= 2 * LIMIT; accepted++) {
      const response = await get(`/api/feed.json?after=${accepted}`, address);
      if (response.status === 429) {
        refused = response;
        break;
      }
      await response.body?.cancel();
    }
    expect(accepted).toBeGreaterThanOrEqual(LIMIT);
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get("retry-after")).toBe("60");
    expect(refused?.headers.get("cache-control")).toBe("no-store");
    expect(refused?.headers.get("access-control-allow-origin")).toBe("*");
    expect(refused?.headers.get("content-type")).toBe("application/problem+json");
    expect(await refused?.json()).toMatchObject({ type: "urn:svc:passport:problem:rate-limited", status: 429 });

    const id = mintIdentityId();
    expect((await get(`/api/agent-envelope?target=${id}`, address)).status).toBe(429);
    expect((await get(`/api/p/${id}/history.json?after=1`, address)).status).toBe(429);
    // The record route and the proof page are answered without the limiter.
    expect((await get(`/api/p/${id}.json`, address)).status).toBe(404);
    expect((await get(`/p/${id}`, address)).status).toBe(404);
    // Another client is not affected.
    expect((await get("/api/feed.json?after=0", freshAddress())).status).toBe(200);
  });
});
