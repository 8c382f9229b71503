// Reciprocal trust in the call path (docs/reciprocal-trust.md): the agent's RFC 9421 / Web Bot Auth
// signature counts only by a key the service proved for its passport, decideCall decides both
// sides of a call, and the fetch wrapper, the provider middleware and the MCP hook act on it.
// Records in the shape the service publishes, signed with the test's own key (RecordServer).

import { env } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { MemoryNonceStore } from "../../packages/verifier/src/call/web-bot-auth.ts";
import { PassportCheckError, passportFetch, RequestSigner } from "../../packages/verifier/src/fetch.ts";
import { StatusStapler } from "../../packages/verifier/src/hono.ts";
import type { PolicyDocument } from "../../packages/verifier/src/index.ts";
import { McpPassportError, withPassport } from "../../packages/verifier/src/mcp.ts";
import { type ProviderVariables, passportProvider, webBotAuth } from "../../packages/verifier/src/provider.ts";
import { KEY_DIRECTORY_PATH, keyDirectory, serve, uniqueHost } from "../support/hosts.ts";
import { API_URL, agentRecord, call, DIRECTORY, type Key, keyPair, policy, setUp, signedOver } from "./call-support.ts";
import { Owner, RESOLVER, recording, resolverFetch, verifierFor } from "./support.ts";

describe("decideCall: the caller's signature by a proven key", () => {
  it("a request signed by a proven key is allowed, with the signature in the receipt and the caller's side", async () => {
    const t = await setUp();
    const request = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    const result = await t.verifier.decideCall(call(policy(), t.api.identity_id, request));
    expect(result.decision).toBe("allow");
    expect(result.sides.caller?.signature).toMatchObject({ keyid: t.key.thumbprint, thumbprint: t.key.thumbprint });
    expect(result.receipt.caller?.identity_id).toBe(t.agent.identity_id);
    expect(result.receipt.subject.identity_id).toBe(t.api.identity_id);
    expect(result.receipt.checks).toContainEqual(
      expect.objectContaining({ check: "caller.signature", result: "passed" }),
    );
  });

  it("a request signed by a key not proven for the agent is refused, even when the directory serves it", async () => {
    const t = await setUp();
    const other = await keyPair();
    t.setDirectory([t.key, other]);
    const request = await (await t.signer(other)).sign(new Request(API_URL, { method: "POST" }));
    const result = await t.verifier.decideCall(call(policy(), t.api.identity_id, request));
    expect(result.decision).toBe("deny");
    expect(result.caller_problem).toMatchObject({ check: "caller.signature", problem: "key_not_proven" });
  });

  it("a key directory over 64 KB (counted in bytes, not characters) or repeating a member is not read", async () => {
    const t = await setUp();
    const request = () => t.signer().then((signer) => signer.sign(new Request(API_URL, { method: "POST" })));
    const bodies = [
      // 40,000 characters, 80,000 bytes of UTF-8.
      JSON.stringify({ padding: "\u00e9".repeat(40_000), keys: [t.key.publicJwk] }),
      `{"keys":[],"keys":${JSON.stringify([t.key.publicJwk])}}`,
    ];
    for (const body of bodies) {
      const verifier = t.server.verifier({
        now: Date.now,
        callerSignatures: webBotAuth({ fetch: async () => new Response(body, { status: 200 }) }),
      });
      const result = await verifier.decideCall(call(policy(), t.api.identity_id, await request()));
      expect(result.decision).not.toBe("allow");
      expect(result.caller_problem).toMatchObject({ check: "caller.signature" });
    }
  });

  it("a signature that covers neither the method nor the path is refused, however valid", async () => {
    const t = await setUp();
    // The hand-made signature counts when it covers what is required...
    const full = await signedOver(
      ["@method", "@authority", "@path", "passport-agent"],
      t.key,
      t.agent.identity_id,
      "DELETE",
    );
    expect((await t.verifier.decideCall(call(policy(), t.api.identity_id, full))).decision).toBe("allow");
    // ...and not when it leaves out the path, or the method and the path.
    for (const components of [
      ["@authority", "passport-agent"],
      ["@method", "@authority", "passport-agent"],
    ]) {
      const request = await signedOver(components, t.key, t.agent.identity_id, "DELETE");
      const result = await t.verifier.decideCall(call(policy(), t.api.identity_id, request));
      expect(result.decision).not.toBe("allow");
      expect(result.caller_problem).toMatchObject({ check: "caller.signature", problem: "signature_invalid" });
      expect(result.caller_problem?.detail).toMatch(/@path/);
    }
  });

  it("a refused signature's receipt names the caller's record whose keys were checked", async () => {
    const t = await setUp();
    const other = await keyPair();
    const request = await (await t.signer(other)).sign(new Request(API_URL, { method: "POST" }));
    const result = await t.verifier.decideCall(call(policy(), t.api.identity_id, request));
    expect(result.decision).toBe("deny");
    expect(result.receipt.caller).toEqual({
      identity_id: t.agent.identity_id,
      record_version: t.agent.record_version,
      digest: t.agent.digest,
      kid: expect.any(String),
    });
    expect(result.sides.caller).toMatchObject({ outcome: "ok", relied_on: { identity_id: t.agent.identity_id } });
  });

  it("a tampered request (another address than signed) does not verify", async () => {
    const t = await setUp();
    const signed = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    const moved = new Request("https://api.contract.example/v1/refunds", signed);
    const result = await t.verifier.decideCall(call(policy(), t.api.identity_id, moved));
    expect(result.caller_problem).toMatchObject({ problem: "signature_invalid" });
    expect(result.decision).toBe("deny");
  });

  it("a rotated key counts once the service re-proved it, not before", async () => {
    const t = await setUp();
    const rotated = await keyPair();
    // The agent rotates: its directory serves only the new key, which the record does not list yet.
    t.setDirectory([rotated]);
    const early = await (await t.signer(rotated)).sign(new Request(API_URL, { method: "POST" }));
    const before = await t.verifier.decideCall(call(policy(), t.api.identity_id, early));
    expect(before.caller_problem).toMatchObject({ problem: "key_not_proven" });

    // The service's re-check saw the rotation: the next version lists the new key only.
    await t.server.publish({
      ...agentRecord([rotated], { identity_id: t.agent.identity_id, uses: t.agent.uses as never }),
      record_version: 2,
      previous_digest: t.agent.digest,
    });
    const later = await (await t.signer(rotated)).sign(new Request(API_URL, { method: "POST" }));
    const after = await t.verifier.decideCall(call(policy(), t.api.identity_id, later));
    expect(after.decision).toBe("allow");
    expect(after.sides.caller?.signature?.keyid).toBe(rotated.thumbprint);
    // The old key no longer counts.
    const old = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    const refused = await t.verifier.decideCall(call(policy(), t.api.identity_id, old));
    expect(refused.caller_problem).toMatchObject({ problem: "key_not_proven" });
  });

  it("a signature replayed outside its window is refused, however long its own expiry", async () => {
    const t = await setUp();
    // Made two minutes ago and expired: refused.
    const expired = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }), Date.now() - 120_000);
    const first = await t.verifier.decideCall(call(policy(), t.api.identity_id, expired));
    expect(first.caller_problem).toMatchObject({ check: "caller.signature", problem: "signature_expired" });
    // Made two minutes ago but claiming ten minutes' validity: still older than the 60 s window.
    const long = await (await t.signer(t.key, { validitySeconds: 600 })).sign(
      new Request(API_URL, { method: "POST" }),
      Date.now() - 120_000,
    );
    const second = await t.verifier.decideCall(call(policy(), t.api.identity_id, long));
    expect(second.caller_problem).toMatchObject({ problem: "signature_expired" });
    // The window is the policy's: a 10-minute window admits it.
    const wide = await t.verifier.decideCall(
      call(policy({ required: true, signature_window: "10m" }), t.api.identity_id, long),
    );
    expect(wide.decision).toBe("allow");
  });

  it("a signature its headers alone refuse is refused before the calling passport is looked up", async () => {
    const t = await setUp();
    const { fetch, calls } = recording(t.server.fetch);
    const verifier = t.server.verifier({
      now: Date.now,
      fetch,
      callerSignatures: webBotAuth({ fetch: t.host.fetch }),
    });
    const agentReads = () => calls.filter((c) => c.url.includes(t.agent.identity_id)).length;
    // Expired, and (another copy) signed over the host alone.
    const expired = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }), Date.now() - 120_000);
    const refused = await verifier.decideCall(call(policy(), t.api.identity_id, expired));
    expect(refused).toMatchObject({ decision: "challenge", caller_problem: { problem: "signature_expired" } });
    const hostOnly = new Request(API_URL, { method: "POST", headers: expired.headers });
    hostOnly.headers.set(
      "signature-input",
      (expired.headers.get("signature-input") ?? "").replace(/\("[^)]*\)/, '("@authority" "passport-agent")'),
    );
    const uncovered = await verifier.decideCall(call(policy(), t.api.identity_id, hostOnly));
    expect(uncovered).toMatchObject({ decision: "deny", caller_problem: { problem: "signature_invalid" } });
    expect(agentReads()).toBe(0);
    // A request that could be accepted is decided on the caller's passport, read once.
    const fresh = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    expect((await verifier.decideCall(call(policy(), t.api.identity_id, fresh))).decision).toBe("allow");
    expect(agentReads()).toBe(1);
  });

  it("with a nonce store, the same signed request replayed within its window is refused", async () => {
    const t = await setUp();
    const checker = webBotAuth({ fetch: t.host.fetch, nonces: new MemoryNonceStore() });
    const request = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    const decide = () =>
      t.verifier.decideCall({ ...call(policy(), t.api.identity_id, request.clone()), signatures: checker });
    expect((await decide()).decision).toBe("allow");
    expect((await decide()).caller_problem).toMatchObject({ problem: "signature_replayed" });
  });

  it("an unsigned call is challenged when the policy requires a caller, and decided on the API alone when not", async () => {
    const t = await setUp();
    const plain = new Request(API_URL, { method: "POST" });
    const required = await t.verifier.decideCall(call(policy(), t.api.identity_id, plain));
    expect(required.decision).toBe("challenge");
    expect(required.caller_problem).toMatchObject({ problem: "signature_missing" });
    const optional = await t.verifier.decideCall(call(policy({ required: false }), t.api.identity_id, plain));
    expect(optional.decision).toBe("allow");
    expect(optional.receipt.checks).toContainEqual(expect.objectContaining({ check: "caller", result: "not_checked" }));
  });
});

describe("decideCall: the agent's uses link", () => {
  const linked = policy({ required: true, uses_link: true });

  it("is allowed when the agent declares the API", async () => {
    const t = await setUp();
    const request = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    const result = await t.verifier.decideCall(call(linked, t.api.identity_id, request));
    expect(result.decision).toBe("allow");
    expect(result.receipt.checks).toContainEqual(
      expect.objectContaining({ check: "caller.uses_link", result: "passed" }),
    );
  });

  it("is refused when the link is missing, naming the check", async () => {
    const t = await setUp({ uses: false });
    const request = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    const result = await t.verifier.decideCall(call(linked, t.api.identity_id, request));
    expect(result.decision).toBe("deny");
    expect(result.caller_problem).toMatchObject({ check: "caller.uses_link", problem: "link_missing" });
  });

  it("a link to a revoked API passport does not help: the API's side fails", async () => {
    const t = await setUp({
      apiOverrides: { state: { lifecycle: "revoked", environment: "production", as_of: new Date().toISOString() } },
    });
    const request = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    const result = await t.verifier.decideCall(call(linked, t.api.identity_id, request));
    expect(result.decision).toBe("deny");
    expect(result.outcome.outcome).toBe("state_not_operative");
    expect(result.sides.api.outcome).toBe("state_not_operative");
  });
});

/** `passportFetch` for the contract API, signed as the agent; the API answers `answer()` and what it was sent is kept. */
async function signedFetch(t: Awaited<ReturnType<typeof setUp>>, answer: () => Response) {
  const sent: Request[] = [];
  const call = passportFetch({
    verifier: t.verifier,
    apis: { "https://api.contract.example": t.api.identity_id },
    signer: await t.signer(),
    fetch: async (request) => {
      sent.push(request);
      return answer();
    },
  });
  return { call, sent };
}

describe("passportFetch: the consumer checks the API's passport before calling", () => {
  it("calls an API whose endpoint binding covers the URL, signed as the agent", async () => {
    const t = await setUp();
    const { call, sent } = await signedFetch(t, () => new Response("ok"));
    expect(await (await call(API_URL, { method: "POST" })).text()).toBe("ok");
    expect(sent[0]?.headers.get("passport-agent")).toBe(t.agent.identity_id);
    expect(sent[0]?.headers.get("signature-input")).toContain(`keyid="${t.key.thumbprint}"`);
  });

  it("returns a redirect as it is, never following it with the agent's signature to another origin", async () => {
    const t = await setUp();
    const { call, sent } = await signedFetch(
      t,
      () => new Response(null, { status: 307, headers: { location: "https://elsewhere.example/collect" } }),
    );
    const answer = await call(API_URL, { method: "POST", body: "{}" });
    expect(answer.status).toBe(307);
    expect(answer.headers.get("location")).toBe("https://elsewhere.example/collect");
    expect(sent).toHaveLength(1);
    expect(sent[0]?.redirect).toBe("manual");
    expect(sent[0]?.headers.get("passport-agent")).toBe(t.agent.identity_id);
  });

  it("refuses, without sending anything, an API whose binding is not verified", async () => {
    const t = await setUp({
      apiOverrides: {
        bindings: [{ class: "endpoint", value: "https://api.contract.example/v1", verification: { state: "claimed" } }],
      },
    });
    let sent = 0;
    const call = passportFetch({
      verifier: t.verifier,
      apis: { "https://api.contract.example": t.api.identity_id },
      fetch: async () => {
        sent++;
        return new Response("ok");
      },
    });
    const error = await call(API_URL).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PassportCheckError);
    expect((error as PassportCheckError).outcome?.outcome).toBe("binding_unverified");
    expect(sent).toBe(0);
  });

  it("reads no discovery document over 64 KB (in bytes) or repeating a member", async () => {
    const t = await setUp();
    const named = [{ identity_id: t.api.identity_id }];
    for (const body of [
      JSON.stringify({ padding: "\u00e9".repeat(40_000), identities: named }),
      `{"identities":[],"identities":${JSON.stringify(named)}}`,
    ]) {
      let sent = 0;
      const call = passportFetch({
        verifier: t.verifier,
        fetch: async (request) => {
          if (new URL(request.url).pathname === "/.well-known/passport-identity.json") return new Response(body);
          sent++;
          return new Response("ok");
        },
      });
      await expect(call(API_URL)).rejects.toBeInstanceOf(PassportCheckError);
      expect(sent).toBe(0);
    }
  });

  it("discovers the passport from the provider's well-known document, and refuses a host that names none", async () => {
    const t = await setUp();
    const calls: string[] = [];
    const network = async (request: Request) => {
      calls.push(new URL(request.url).pathname);
      if (new URL(request.url).pathname === "/.well-known/passport-identity.json") {
        return request.url.startsWith("https://api.contract.example")
          ? Response.json({ identities: [{ identity_id: t.api.identity_id }] })
          : new Response("not found", { status: 404 });
      }
      return new Response("ok");
    };
    const call = passportFetch({ verifier: t.verifier, fetch: network });
    expect((await call(API_URL)).status).toBe(200);
    expect(calls).toEqual(["/.well-known/passport-identity.json", "/v1/orders"]);
    const error = await call("https://elsewhere.example/v1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PassportCheckError);
    expect(calls).not.toContain("/v1");
  });
});

describe("passportProvider: the provider decides each call and refuses with a problem", () => {
  async function provider(t: Awaited<ReturnType<typeof setUp>>, p = policy()) {
    const app = new Hono<{ Variables: ProviderVariables }>();
    let handled = 0;
    app.use(
      "/v1/*",
      passportProvider({
        verifier: t.verifier,
        identityId: t.api.identity_id,
        policy: p,
        action: "orders.create",
        signatureOptions: { fetch: t.host.fetch },
      }),
    );
    app.post("/v1/orders", (c) => {
      handled++;
      return c.json({ caller: c.get("passport").receipt.caller?.identity_id });
    });
    return { app, handled: () => handled };
  }

  it("runs the handler for a signed call and exposes the decision", async () => {
    const t = await setUp();
    const { app, handled } = await provider(t);
    const request = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    const response = await app.request(request);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ caller: t.agent.identity_id });
    expect(handled()).toBe(1);
  });

  it("answers an unsigned call 401 and a call signed by an unproven key 401, naming the check only", async () => {
    const t = await setUp();
    const { app, handled } = await provider(t);
    const unsigned = await app.request(new Request(API_URL, { method: "POST" }));
    expect(unsigned.status).toBe(401);
    expect(unsigned.headers.get("content-type")).toBe("application/problem+json");
    expect(await unsigned.json()).toMatchObject({
      type: "urn:svc:passport:problem:caller-signature",
      check: "caller.signature",
      status: 401,
    });
    const stranger = await keyPair();
    const forged = await (await t.signer(stranger)).sign(new Request(API_URL, { method: "POST" }));
    const refused = await app.request(forged);
    expect(refused.status).toBe(401);
    const body = await refused.json();
    expect(body).toMatchObject({ check: "caller.signature", detail: expect.stringContaining("not proven") });
    // Nothing of the key, the record or the directory is told.
    expect(JSON.stringify(body)).not.toContain(stranger.thumbprint);
    expect(JSON.stringify(body)).not.toContain(DIRECTORY);
    expect(handled()).toBe(0);
  });

  it("answers 403 for a revoked agent passport", async () => {
    const t = await setUp();
    await t.server.publish({
      ...t.agent,
      state: { lifecycle: "revoked", as_of: new Date().toISOString() },
      record_version: 2,
      previous_digest: t.agent.digest,
    });
    const { app } = await provider(t);
    const request = await (await t.signer()).sign(new Request(API_URL, { method: "POST" }));
    const response = await app.request(request);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ type: "urn:svc:passport:problem:caller-passport" });
  });
});

describe("withPassport: the MCP client checks the server's passport", () => {
  async function mcpServer() {
    const server = new McpServer({ name: "orders", version: "1.0.0" });
    let toolCalls = 0;
    server.registerTool("list_orders", { description: "Lists orders" }, async () => {
      toolCalls++;
      return { content: [{ type: "text", text: "[]" }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    return { clientSide, toolCalls: () => toolCalls };
  }
  const mcpPolicy = {
    policy_format: "svc.passport_policy",
    version: 1,
    actions: { connect: { family: "api" }, "tool:list_orders": { family: "api", consequence: "changing" } },
  } as PolicyDocument;

  it("refuses to connect to a server without a passport when the policy requires one", async () => {
    const t = await setUp();
    const { clientSide } = await mcpServer();
    const client = withPassport(new Client({ name: "agent", version: "1.0.0" }), {
      verifier: t.verifier,
      policy: mcpPolicy,
    });
    const error = await client.connect(clientSide).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpPassportError);
    expect((error as McpPassportError).step).toBe("connect");
  });

  it("connects to a server without a passport when the policy has no connect action", async () => {
    const t = await setUp();
    const { clientSide } = await mcpServer();
    const { connect: _, ...actions } = mcpPolicy.actions;
    const client = withPassport(new Client({ name: "agent", version: "1.0.0" }), {
      verifier: t.verifier,
      policy: { ...mcpPolicy, actions },
    });
    await client.connect(clientSide);
    expect(client.getServerVersion()?.name).toBe("orders");
    await client.close();
  });

  it("connects to and calls tools of a server whose passport passes; refuses a tool call once it does not", async () => {
    const t = await setUp();
    const { clientSide, toolCalls } = await mcpServer();
    const client = withPassport(new Client({ name: "agent", version: "1.0.0" }), {
      verifier: t.verifier,
      identityId: t.api.identity_id,
      policy: mcpPolicy,
    });
    await client.connect(clientSide);
    await client.callTool({ name: "list_orders", arguments: {} });
    expect(toolCalls()).toBe(1);
    await t.server.publish({
      ...t.api,
      state: { lifecycle: "suspended", as_of: new Date().toISOString() },
      record_version: 2,
      previous_digest: t.api.digest,
    });
    const error = await client.callTool({ name: "list_orders", arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpPassportError);
    expect((error as McpPassportError).result?.outcome.outcome).toBe("state_not_operative");
    expect(toolCalls()).toBe(1);
    await client.close();
  });
});

describe("higher with a stapled token: the cached record it proves current needs no request", () => {
  const recordCalls = (calls: { url: string }[]) => calls.filter((c) => c.url.endsWith(".json")).length;
  const statusOf = async (id: string) =>
    ((await (await resolverFetch(`${RESOLVER}/api/p/${id}/status`)).json()) as { token: string }).token;

  it("reuses the cached copy of exactly the version the token states, and fetches when it states another", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const { fetch, calls } = recording();
    const verifier = verifierFor({ fetch });
    expect((await verifier.verify(id, { family: "api", consequence: "higher" })).outcome).toBe("ok");
    const fetched = recordCalls(calls);

    const current = await verifier.verify(id, {
      family: "api",
      consequence: "higher",
      statusToken: await statusOf(id),
    });
    expect(current).toMatchObject({
      outcome: "ok",
      source: { from_cache: true },
      proof: { status: { source: "stapled" } },
    });
    expect(recordCalls(calls)).toBe(fetched);

    await owner.state(id, { lifecycle: "revoked", reason: "key compromise" });
    const after = await verifier.verify(id, { family: "api", consequence: "higher", statusToken: await statusOf(id) });
    expect(recordCalls(calls)).toBe(fetched + 1);
    expect(after.outcome).not.toBe("ok");
  });
});

describe("the provider against the service: a rotated key counts once the service re-proved it", () => {
  const ROTATION_POLICY = {
    policy_format: "svc.passport_policy",
    version: 1,
    actions: { "orders.read": { family: "api", caller: { required: true, consequence: "higher" } } },
  } as PolicyDocument;

  it("accepts the old key, refuses the new one until the binding is re-checked, then only the new one", async () => {
    const owner = await Owner.create();
    const { id: apiId } = await owner.apiPassport();
    const host = uniqueHost("bot");
    const directory = `https://${host}${KEY_DIRECTORY_PATH}`;
    const created = await owner.caller.createPassport({
      family: "agent",
      display_name: "Rotating agent",
      bindings: [{ class: "signing_keys", value: directory }],
    });
    const agentId = created.identity_id as string;
    const recheck = async (keys: Key[]) => {
      await serve(host, {
        [KEY_DIRECTORY_PATH]: keyDirectory({ passport: agentId, keys: keys.map((k) => k.publicJwk) }),
      });
      const answer = await owner.caller.json(
        "POST",
        `/v1/passports/${agentId}/bindings/${created.bindings[0].id}/verify`,
      );
      expect(answer.result).toBe("verified");
    };
    const [first, second] = [await keyPair(), await keyPair()];
    await recheck([first]);

    const app = new Hono<{ Variables: ProviderVariables }>();
    app.use(
      "/v1/*",
      passportProvider({
        verifier: verifierFor(),
        identityId: apiId,
        policy: ROTATION_POLICY,
        action: "orders.read",
        // The API's endpoint binding is not verified in this test: its public origin is configured.
        origin: new URL(API_URL).origin,
        signatureOptions: { fetch: (input, init) => (env.OUTBOUND_SIMULATOR as Fetcher).fetch(input, init) },
      }),
    );
    app.get("/v1/orders", (c) => c.json({ keyid: c.get("passport").sides.caller?.signature?.keyid }));
    const signedBy = async (key: Key) =>
      app.request(
        await (await RequestSigner.create({ privateJwk: key.privateJwk, directory, identityId: agentId })).sign(
          new Request(API_URL),
        ),
      );

    expect(await (await signedBy(first)).json()).toEqual({ keyid: first.thumbprint });
    // The agent rotates: its directory now holds only the new key, which the record does not list yet.
    await serve(host, { [KEY_DIRECTORY_PATH]: keyDirectory({ passport: agentId, keys: [second.publicJwk] }) });
    expect((await signedBy(second)).status).toBe(401);
    // The service's re-check sees the rotation and publishes the new key's thumbprint.
    await recheck([second]);
    const rotated = await signedBy(second);
    expect(rotated.status).toBe(200);
    expect(await rotated.json()).toEqual({ keyid: second.thumbprint });
    expect((await signedBy(first)).status).toBe(401);
  });
});

describe("the provider refuses to answer while its own passport cannot be established", () => {
  it("answers 503 unavailable, naming no caller check, when the API's passport is revoked", async () => {
    const t = await setUp({
      apiOverrides: { state: { lifecycle: "revoked", environment: "production", as_of: new Date().toISOString() } },
    });
    const app = new Hono<{ Variables: ProviderVariables }>();
    app.use(
      "/v1/*",
      passportProvider({
        verifier: t.verifier,
        identityId: t.api.identity_id,
        policy: policy(),
        action: "orders.create",
        signatureOptions: { fetch: t.host.fetch },
      }),
    );
    app.post("/v1/orders", (c) => c.json({}));
    const response = await app.request(await (await t.signer()).sign(new Request(API_URL, { method: "POST" })));
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(await response.json()).toMatchObject({
      type: "urn:svc:passport:problem:unavailable",
      check: "api.passport",
    });
  });
});

describe("the agent staples its own status token: the provider decides it at higher without a status request", () => {
  it("sends Passport-Status with the signed call, and the provider relies on it", async () => {
    const owner = await Owner.create();
    const { id: apiId, endpoint } = await owner.apiPassport();
    const host = uniqueHost("bot");
    const directory = `https://${host}${KEY_DIRECTORY_PATH}`;
    const created = await owner.caller.createPassport({
      family: "agent",
      display_name: "Stapling agent",
      bindings: [{ class: "signing_keys", value: directory }],
    });
    const agentId = created.identity_id as string;
    const key = await keyPair();
    await serve(host, { [KEY_DIRECTORY_PATH]: keyDirectory({ passport: agentId, keys: [key.publicJwk] }) });
    const proven = await owner.caller.json(
      "POST",
      `/v1/passports/${agentId}/bindings/${created.bindings[0].id}/verify`,
    );
    expect(proven.result).toBe("verified");

    const provider = recording();
    const verifier = verifierFor({ fetch: provider.fetch });
    const app = new Hono<{ Variables: ProviderVariables }>();
    app.use(
      "*",
      passportProvider({
        verifier,
        identityId: apiId,
        policy: {
          policy_format: "svc.passport_policy",
          version: 1,
          actions: { read: { family: "api", caller: { required: true, consequence: "higher" } } },
        } as PolicyDocument,
        action: "read",
        origin: new URL(endpoint).origin,
        signatureOptions: { fetch: (input, init) => (env.OUTBOUND_SIMULATOR as Fetcher).fetch(input, init) },
      }),
    );
    app.get("*", (c) => c.json({ status: c.get("passport").sides.caller?.proof?.status?.source }));

    const call = passportFetch({
      verifier: verifierFor(),
      // The consumer's own check of the API is not the point here: the endpoint is unverified.
      check: async (id) => verifierFor().verify(id, { family: "api" }),
      apis: { [endpoint]: apiId },
      signer: await RequestSigner.create({ privateJwk: key.privateJwk, directory, identityId: agentId }),
      stapler: new StatusStapler({ resolver: RESOLVER, identityId: agentId, fetch: resolverFetch }),
      fetch: async (request) => {
        expect(request.headers.get("passport-status")).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
        return app.request(request);
      },
    });
    // A first call fills the provider's cache; the next one needs no request about the agent at all.
    expect(await (await call(`${endpoint}/orders`)).json()).toEqual({ status: "stapled" });
    const before = provider.calls.filter((c) => c.url.includes(agentId)).length;
    expect(await (await call(`${endpoint}/orders`)).json()).toEqual({ status: "stapled" });
    expect(provider.calls.filter((c) => c.url.includes(agentId)).length).toBe(before);
  });
});
