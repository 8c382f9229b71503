// The provider's stapling middleware (@passport/verifier/hono; docs/verifier.md, Stapling): the
// API answers with its passport's current status token, and a consumer decides at higher
// consequence on it offline.
import { env } from "cloudflare:workers";
import { type SnapshotMetadata, snapshotKey } from "@passport/domain";
import { Hono } from "hono";
import { describe, expect, it, vi } from "vitest";
import { passportStatus } from "../../packages/verifier/src/hono.ts";
import { STATUS_HEADER } from "../../packages/verifier/src/index.ts";
import { Owner, RESOLVER, recording, resolverFetch, verifierFor } from "./support.ts";

/** A provider's API with the middleware in front, reaching the real resolver. */
function providerApi(identityId: string, options: Partial<Parameters<typeof passportStatus>[0]> = {}) {
  const api = new Hono();
  let handled = 0;
  api.use("*", passportStatus({ resolver: RESOLVER, identityId, fetch: resolverFetch, ...options }));
  api.get("/v1/charges", (c) => {
    handled++;
    return c.json({ charges: [] }, 200, { "access-control-allow-origin": "*" });
  });
  return { api, handled: () => handled };
}

const base64url = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const claimsOf = (token: string) =>
  JSON.parse(atob((token.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/"))) as { iat: number; exp: number };

/** `token` as if issued `seconds` later (the stapler reads a token's claims; it does not check its signature). */
function laterToken(token: string, seconds: number): string {
  const [header, , signature] = token.split(".");
  const claims = claimsOf(token);
  const later = { ...claims, iat: claims.iat + seconds, exp: claims.exp + seconds };
  return `${header}.${base64url(JSON.stringify(later))}.${signature}`;
}

const statusCalls = (calls: { url: string }[]) => calls.filter((c) => c.url.endsWith("/status")).length;

describe("passportStatus: the provider staples its current status token", () => {
  it("serves the token with every answer, fetched once and reused until shortly before it expires", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    // The second status answer is a distinct token (a later one, as the resolver would sign), so
    // serving it shows the refresh took effect.
    let statusAnswers = 0;
    let refreshed = "";
    const { fetch, calls } = recording(async (input, init) => {
      const answer = await resolverFetch(input, init);
      if (!input.endsWith("/status") || ++statusAnswers !== 2) return answer;
      const { token } = (await answer.json()) as { token: string };
      refreshed = laterToken(token, 31);
      return Response.json({ token: refreshed });
    });
    let now = Date.now();
    const { api } = providerApi(id, { fetch, now: () => now });
    const first = await api.request("/v1/charges");
    const token = first.headers.get(STATUS_HEADER);
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(first.headers.get("access-control-expose-headers")).toBe(STATUS_HEADER);
    await api.request("/v1/charges");
    expect(statusCalls(calls)).toBe(1);

    // 31 s later fewer than 30 s remain: a new token is fetched before the old one expires.
    now += 31_000;
    const later = await api.request("/v1/charges");
    expect(statusCalls(calls)).toBe(2);
    // Meanwhile the held token is served; once the refresh has arrived, the new one.
    expect(later.headers.get(STATUS_HEADER)).toBe(token);
    await vi.waitFor(async () => {
      expect(refreshed).not.toBe("");
      expect((await api.request("/v1/charges")).headers.get(STATUS_HEADER)).toBe(refreshed);
    });
    expect(refreshed).not.toBe(token);
    expect(statusCalls(calls)).toBe(2);

    // The consumer decides on the stapled token alone: no status request of its own.
    const consumer = recording();
    const result = await verifierFor({ fetch: consumer.fetch }).verify(id, {
      family: "api",
      consequence: "higher",
      statusToken: token ?? "",
    });
    expect(result).toMatchObject({ outcome: "ok", proof: { status: { source: "stapled" } } });
    expect(result.current_as_of).toBeTruthy();
    expect(result.current_as_of).toBe(new Date(claimsOf(token ?? "").iat * 1000).toISOString());
    expect(statusCalls(consumer.calls)).toBe(0);
  });

  it("staples nothing from a status answer that repeats a member, and says why", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const real = ((await (await resolverFetch(`${RESOLVER}/api/p/${id}/status`)).json()) as { token: string }).token;
    const errors: Error[] = [];
    const { api } = providerApi(id, {
      fetch: async () => new Response(`{"token":"x","token":${JSON.stringify(real)}}`, { status: 200 }),
      onError: (error) => errors.push(error),
    });
    const answer = await api.request("/v1/charges");
    expect(answer.headers.get(STATUS_HEADER)).toBeNull();
    expect(errors[0]?.message).toMatch(/repeat|duplicate/i);
  });

  it("after a revocation the stapled token says so: the record from before it is stale, the current one not ok", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const old = await resolverFetch(`${RESOLVER}/api/p/${id}.json`);
    const before = { body: await old.text(), signature: old.headers.get("passport-signature") ?? "" };
    const metadata = (await env.SNAPSHOTS.getWithMetadata<SnapshotMetadata>(snapshotKey(id))).metadata;
    await owner.state(id, { lifecycle: "revoked", reason: "key compromise" });
    const stapled = (await providerApi(id).api.request("/v1/charges")).headers.get(STATUS_HEADER) ?? "";

    const fed = await verifierFor().verify(id, { consequence: "higher", statusToken: stapled, record: before });
    expect(fed).toMatchObject({ outcome: "stale", next_step: "re-resolve", stale: [{ problem: "record_superseded" }] });
    // A lagging copy served as current: stale as well.
    await env.SNAPSHOTS.put(snapshotKey(id), before.body, { metadata });
    const lagging = await verifierFor().verify(id, { consequence: "higher", statusToken: stapled });
    expect(lagging).toMatchObject({ outcome: "stale", proof: { status: { source: "stapled", lifecycle: "revoked" } } });
  });

  it("fails open by default and closed when configured, when no valid token can be had", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const down = () => Promise.reject(new TypeError("connection refused"));
    const errors: Error[] = [];
    const open = providerApi(id, { fetch: down, onError: (e) => errors.push(e) });
    const answer = await open.api.request("/v1/charges");
    expect(answer.status).toBe(200);
    expect(answer.headers.has(STATUS_HEADER)).toBe(false);
    expect(errors[0]?.message).toContain("connection refused");

    const closed = providerApi(id, { fetch: down, failMode: "closed" });
    const refused = await closed.api.request("/v1/charges");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(await refused.json()).toMatchObject({ type: "urn:svc:passport:problem:unavailable" });
    expect(closed.handled()).toBe(0);

    // A token held keeps being served while valid if a refresh fails; once expired it is never stapled.
    let now = Date.now();
    let fail = false;
    const flaky = providerApi(id, {
      failMode: "closed",
      now: () => now,
      fetch: (input, init) => (fail ? down() : resolverFetch(input, init)),
    });
    expect((await flaky.api.request("/v1/charges")).headers.get(STATUS_HEADER)).toBeTruthy();
    fail = true;
    now += 45_000;
    expect((await flaky.api.request("/v1/charges")).headers.get(STATUS_HEADER)).toBeTruthy();
    now += 20_000;
    expect((await flaky.api.request("/v1/charges")).status).toBe(503);
  });
});
