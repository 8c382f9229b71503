import { env, exports } from "cloudflare:workers";
import { identityCacheTag, mintIdentityId, PROBLEM_TYPE_BASE, snapshotKey } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { aggregate, BASE, publish } from "./support/records.ts";

const get = (path: string, init?: RequestInit) => exports.default.fetch(`${BASE}${path}`, init);

async function expectProblem(response: Response, status: number, slug: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect(response.headers.get("access-control-allow-origin")).toBe("*");
  const body = await response.json<Record<string, unknown>>();
  expect(body).toMatchObject({ type: PROBLEM_TYPE_BASE + slug, status });
  return body;
}

describe("GET /api/p/{identity_id}.json", () => {
  it("serves the published record byte for byte, with its ETag, cache headers, Cache-Tag and CORS", async () => {
    const record = await publish(aggregate());
    const stored = await env.SNAPSHOTS.get(snapshotKey(record.identity_id), "text");
    const response = await get(`/api/p/${record.identity_id}.json`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(stored);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("etag")).toBe(`"${record.digest}"`);
    expect(response.headers.get("cache-control")).toBe("public, max-age=15");
    expect(response.headers.get("cloudflare-cdn-cache-control")).toBe("public, max-age=30, stale-if-error=0");
    expect(response.headers.get("cache-tag")).toBe(identityCacheTag(record.identity_id));
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-expose-headers")).toBe("ETag, Passport-Signature, Passport-Log-Index");
  });

  it("answers HEAD with the same status and headers and no body", async () => {
    const record = await publish(aggregate());
    const full = await get(`/api/p/${record.identity_id}.json`);
    const head = await get(`/api/p/${record.identity_id}.json`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    for (const name of ["content-type", "etag", "cache-control", "cache-tag", "access-control-allow-origin"]) {
      expect(head.headers.get(name)).toBe(full.headers.get(name));
    }
    const missing = await get(`/api/p/${mintIdentityId()}.json`, { method: "HEAD" });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe("");
  });

  it("answers a matching If-None-Match with 304 and no body, and a stale one with the new record", async () => {
    const first = await publish(aggregate());
    const etag = `"${first.digest}"`;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const response = await get(`/api/p/${first.identity_id}.json`, { headers: { "if-none-match": header } });
      expect(response.status, header).toBe(304);
      expect(await response.text()).toBe("");
      expect(response.headers.get("etag")).toBe(etag);
      expect(response.headers.get("cache-control")).toBe("public, max-age=15");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    }
    const changed = await publish(
      aggregate({ passport: { id: first.identity_id, lifecycle: "suspended", recordVersion: 2 } }),
    );
    const response = await get(`/api/p/${first.identity_id}.json`, { headers: { "if-none-match": etag } });
    expect(response.status).toBe(200);
    expect(response.headers.get("etag")).toBe(`"${changed.digest}"`);
    expect(await response.json()).toMatchObject({ record_version: 2, state: { lifecycle: "suspended" } });
  });

  it.each(["suspended", "revoked", "retired"] as const)(
    "still resolves a %s passport with its state: the identity is never repurposed",
    async (lifecycle) => {
      const record = await publish(aggregate({ passport: { lifecycle, recordVersion: 4 } }));
      const response = await get(`/api/p/${record.identity_id}.json`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        identity_id: record.identity_id,
        record_version: 4,
        state: { lifecycle },
      });
    },
  );

  it("tells each kind of malformed id apart with a 400 that says what is wrong", async () => {
    const id = mintIdentityId();
    const cases = {
      truncated: [id.slice(0, -1), "truncated"],
      "wrong case": [id.toUpperCase(), "lowercase"],
      "foreign character": [`${id.slice(0, 10)}u${id.slice(11)}`, "letters other than i, l, o and u"],
      "wrong prefix": [`pp_x${id.slice(4)}`, 'start with "psp_"'],
      typo: [`${id.slice(0, 9)}${id[9] === "0" ? "1" : "0"}${id.slice(10)}`, "check character"],
    };
    for (const [name, [candidate, hint]] of Object.entries(cases)) {
      const response = await get(`/api/p/${candidate}.json`);
      const body = await expectProblem(response, 400, "malformed-identity-id");
      expect(body.detail, name).toContain(hint);
      expect(response.headers.get("cache-control")).toBe("public, max-age=3600");
      expect(response.headers.get("etag")).toBeNull();
    }
  });

  it("answers a well-formed id that was never published with a 404 tagged for a later purge, not a guess", async () => {
    const id = mintIdentityId();
    const response = await get(`/api/p/${id}.json`);
    const body = await expectProblem(response, 404, "identity-not-found");
    expect(body).not.toHaveProperty("identity_id");
    expect(response.headers.get("cache-tag")).toBe(identityCacheTag(id));
    expect(response.headers.get("cloudflare-cdn-cache-control")).toBe("public, max-age=30, stale-if-error=0");
  });

  it("decodes a percent-encoded id like any other", async () => {
    const record = await publish(aggregate());
    const encoded = record.identity_id.replace("_", "%5F");
    const response = await get(`/api/p/${encoded}.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ identity_id: record.identity_id });
  });
});

describe("methods, preflight and unknown routes", () => {
  it.each(["POST", "PUT", "PATCH", "DELETE"])("refuses %s with 405 and Allow", async (method) => {
    const record = await publish(aggregate());
    for (const path of [`/api/p/${record.identity_id}.json`, `/p/${record.identity_id}`, "/health"]) {
      const response = await get(path, { method, body: method === "DELETE" ? undefined : "{}" });
      await expectProblem(response, 405, "method-not-allowed");
      expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      expect(response.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("answers a CORS preflight for If-None-Match", async () => {
    const response = await get(`/api/p/${mintIdentityId()}.json`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "if-none-match",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS");
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("if-none-match");
    expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it("answers unknown paths with a 404 route-not-found problem", async () => {
    const id = mintIdentityId();
    for (const path of ["/nothing-here", `/api/p/${id}`, `/api/p/${id}.xml`, `/api/p/${id}.json/extra`, "/api/p/"]) {
      const response = await get(path);
      await expectProblem(response, 404, "route-not-found");
    }
    await expectProblem(await get("/nothing-here", { method: "POST", body: "x" }), 404, "route-not-found");
  });

  it("reports health without touching storage", async () => {
    const response = await get("/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("answers a browser's automatic /favicon.ico with an empty 204, not a 404", async () => {
    const response = await get("/favicon.ico");
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
  });
});
