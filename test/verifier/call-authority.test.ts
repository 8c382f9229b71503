// A caller's signature counts for the API it was made for only (docs/reciprocal-trust.md, Threat
// model): the provider verifies it against its own public address, which no path, header or port
// of the incoming request can change; the query is covered when present; the 5 s clock skew is
// honoured both ways; and a replay is refused where the provider keeps a nonce store.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { MemoryNonceStore, type ProviderVariables, passportProvider } from "../../packages/verifier/src/provider.ts";
import { API_URL, policy, setUp } from "./call-support.ts";
import { contractRecord, verified } from "./support.ts";

type Fixture = Awaited<ReturnType<typeof setUp>>;

/** Another API passport of the same service, at `endpoint`. */
async function otherApi(t: Fixture, endpoint: string) {
  return t.server.publish(
    contractRecord({
      bindings: [
        { class: "endpoint", value: endpoint, bound_at: new Date().toISOString(), verification: verified("evd_other") },
      ],
    }),
  );
}

/** An API behind the provider middleware on a catch-all route, as a gateway mounts it. */
function providerApp(t: Fixture, identityId: string, extra: Partial<Parameters<typeof passportProvider>[0]> = {}) {
  const app = new Hono<{ Variables: ProviderVariables }>();
  app.use(
    "*",
    passportProvider({
      verifier: t.verifier,
      identityId,
      policy: policy(),
      action: "orders.create",
      signatureOptions: { fetch: t.host.fetch },
      ...extra,
    }),
  );
  app.all("*", (c) => c.json({ caller: c.get("passport").receipt.caller?.identity_id }));
  return app;
}

/** The agent's signed POST to `url` (the API it means to call). */
async function signedFor(t: Fixture, url: string, init: RequestInit = { method: "POST" }, now?: number) {
  return (await t.signer()).sign(new Request(url, init), now);
}

/** The same signed request, sent to `url` with `headers` changed. */
function replayed(signed: Request, url: string, headers: Record<string, string> = {}) {
  const copy = new Headers(signed.headers);
  for (const [name, value] of Object.entries(headers)) copy.set(name, value);
  return new Request(url, { method: signed.method, headers: copy });
}

describe("a signature made for one API is not accepted by another", () => {
  it("without a configured origin: the request's own address must be a verified endpoint of this API", async () => {
    const t = await setUp();
    const other = await otherApi(t, "https://other-api.example/v1");
    const app = providerApp(t, other.identity_id);
    // The other API accepts what the agent signed for it...
    expect((await app.request(await signedFor(t, "https://other-api.example/v1/orders"))).status).toBe(200);
    // ...but not the agent's call to the first API replayed to it with the first API's Host.
    const stolen = await signedFor(t, API_URL);
    const answer = await app.request(replayed(stolen, API_URL));
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ check: "caller.signature" });
    // Nor an absolute-form target naming the first API, with the other API's Host header.
    const absolute = replayed(stolen, API_URL, { host: "other-api.example" });
    expect((await app.request(absolute)).status).toBe(401);
  });

  it("with a configured origin: no `//host`, backslash or encoded-slash path names another host", async () => {
    const t = await setUp();
    const other = await otherApi(t, "https://other-api.example/v1");
    const app = providerApp(t, other.identity_id, { origin: "https://other-api.example" });
    expect((await app.request(await signedFor(t, "https://other-api.example/v1/orders"))).status).toBe(200);
    const stolen = await signedFor(t, API_URL);
    for (const path of [
      "//api.contract.example/v1/orders",
      "/\\api.contract.example/v1/orders",
      "/%2F%2Fapi.contract.example/v1/orders",
      "/%2fapi.contract.example/v1/orders",
    ]) {
      const answer = await app.request(replayed(stolen, `https://other-api.example${path}`));
      expect(answer.status, path).toBe(401);
    }
  });

  it("with a configured origin: neither the Host nor the X-Forwarded-Host header, nor the target's host, counts", async () => {
    const t = await setUp();
    const other = await otherApi(t, "https://other-api.example/v1");
    const app = providerApp(t, other.identity_id, { origin: "https://other-api.example" });
    const stolen = await signedFor(t, API_URL);
    const attempts = [
      replayed(stolen, "https://other-api.example/v1/orders", { host: "api.contract.example" }),
      replayed(stolen, "https://other-api.example/v1/orders", { "x-forwarded-host": "api.contract.example" }),
      replayed(stolen, API_URL),
    ];
    for (const attempt of attempts) expect((await app.request(attempt)).status).toBe(401);
  });

  it("a port is part of the authority: a signature for the default port is not accepted on another", async () => {
    const t = await setUp();
    const other = await otherApi(t, "https://api.contract.example:8443/v1");
    const stolen = await signedFor(t, API_URL);
    // Without an origin, the request (Host without the port) is not at the other API's endpoint.
    expect((await providerApp(t, other.identity_id).request(replayed(stolen, API_URL))).status).toBe(401);
    // With one, the address verified carries the port, which the signature did not cover.
    const configured = providerApp(t, other.identity_id, { origin: "https://api.contract.example:8443" });
    expect((await configured.request(replayed(stolen, API_URL))).status).toBe(401);
    const own = await signedFor(t, "https://api.contract.example:8443/v1/orders");
    expect((await configured.request(replayed(own, "http://127.0.0.1:8792/v1/orders"))).status).toBe(200);
  });

  it("refuses an origin that is not one (a path, a query, another scheme)", async () => {
    const t = await setUp();
    for (const origin of ["https://api.example/v1", "https://api.example/?a=1", "ftp://api.example", "api.example"]) {
      expect(() => providerApp(t, t.api.identity_id, { origin }), origin).toThrow(TypeError);
    }
  });
});

describe("the query is covered when present", () => {
  it("a signed call without a query is not accepted with one added, and a signed query not with another", async () => {
    const t = await setUp();
    const app = providerApp(t, t.api.identity_id);
    const plain = await signedFor(t, API_URL, { method: "GET" });
    expect((await app.request(replayed(plain, API_URL))).status).toBe(200);
    const widened = await app.request(replayed(plain, `${API_URL}?customer=other&limit=1000`));
    expect(widened.status).toBe(401);
    expect(await widened.json()).toMatchObject({ check: "caller.signature" });

    const withQuery = await signedFor(t, `${API_URL}?customer=me`, { method: "GET" });
    expect(withQuery.headers.get("signature-input")).toContain('"@query"');
    expect((await app.request(replayed(withQuery, `${API_URL}?customer=me`))).status).toBe(200);
    expect((await app.request(replayed(withQuery, `${API_URL}?customer=other`))).status).toBe(401);
    expect((await app.request(replayed(withQuery, API_URL))).status).toBe(401);
  });
});

describe("the signature window honours 5 s of clock skew both ways", () => {
  it("accepts a signature created 4 s ahead or expired 3 s ago; refuses 7 s ahead or 7 s after expiry", async () => {
    const t = await setUp();
    const decide = async (request: Request) =>
      (
        await t.verifier.decideCall({
          policy: policy(),
          action: "orders.create",
          api: { identityId: t.api.identity_id },
          caller: { request },
        })
      ).decision;
    const now = Date.now();
    // `sign` floors `created` to the second: +4.999 s is between 4 and 5 s ahead.
    expect(await decide(await signedFor(t, API_URL, { method: "POST" }, Math.ceil(now / 1000) * 1000 + 4_000))).toBe(
      "allow",
    );
    expect(await decide(await signedFor(t, API_URL, { method: "POST" }, now - 63_000))).toBe("allow");
    expect(await decide(await signedFor(t, API_URL, { method: "POST" }, now + 8_000))).toBe("challenge");
    expect(await decide(await signedFor(t, API_URL, { method: "POST" }, now - 68_000))).toBe("challenge");
  });
});

describe("replay protection is an option of the provider middleware", () => {
  it("refuses the second use of a signed POST; a GET only when its method is listed", async () => {
    const t = await setUp();
    const app = providerApp(t, t.api.identity_id, { replay: { store: new MemoryNonceStore() } });
    const post = await signedFor(t, API_URL);
    expect((await app.request(replayed(post, API_URL))).status).toBe(200);
    const again = await app.request(replayed(post, API_URL));
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ check: "caller.signature", detail: expect.stringMatching(/already/) });
    // Reads are not refused by default (unsafe methods only)...
    const get = await signedFor(t, API_URL, { method: "GET" });
    expect((await app.request(replayed(get, API_URL))).status).toBe(200);
    expect((await app.request(replayed(get, API_URL))).status).toBe(200);
    // ...and are when the provider lists them, as a payments API does.
    const strict = providerApp(t, t.api.identity_id, { replay: { store: new MemoryNonceStore(), methods: ["GET"] } });
    expect((await strict.request(replayed(get, API_URL))).status).toBe(200);
    expect((await strict.request(replayed(get, API_URL))).status).toBe(401);
  });
});
