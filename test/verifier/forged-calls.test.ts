// Forged calls cost the provider nothing it needs (docs/reciprocal-trust.md, Threat model): a
// minute of 100 forged requests a second, naming any passports with well-formed but bogus
// signatures, causes at most a bounded handful of resolver reads, while legitimate calls and the
// provider's own stapled status token keep working. The resolver here counts every read and, as
// the real one does (120 a minute per client address), refuses the provider past its allowance.
import { mintIdentityId } from "@passport/domain";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { RequestSigner } from "../../packages/verifier/src/fetch.ts";
import type { FetchLike } from "../../packages/verifier/src/http.ts";
import { type ProviderVariables, passportProvider } from "../../packages/verifier/src/provider.ts";
import { API_URL, agentRecord, DIRECTORY, directoryHost, keyPair } from "./call-support.ts";
import { CONTRACT_RESOLVER, contractRecord, RecordServer } from "./support.ts";

const POLICY = {
  policy_format: "svc.passport_policy",
  version: 1,
  actions: {
    "orders.read": {
      family: "api",
      consequence: "higher",
      caller: { required: true, family: "agent", consequence: "higher", uses_link: true },
    },
  },
} as const;

const RESOLVER_LIMIT_PER_MINUTE = 120;

/** Base64 of `n` random bytes. */
const randomBase64 = (n: number) => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(n))));

/** A request with well-formed Web Bot Auth headers and a signature of random bytes, naming `agent` and `keyid`. */
function forged(agent: string, keyid: string, now: number, client: string): Request {
  const created = Math.floor(now / 1000);
  const params = `("@method" "@authority" "@path" "signature-agent" "passport-agent");created=${created};expires=${created + 60};keyid="${keyid}";alg="ed25519";nonce="${randomBase64(64)}";tag="web-bot-auth"`;
  return new Request(API_URL, {
    headers: {
      "signature-agent": JSON.stringify(DIRECTORY),
      "passport-agent": agent,
      "signature-input": `sig1=${params}`,
      signature: `sig1=:${randomBase64(64)}:`,
      "passport-status": "e30.e30.AAAA",
      "cf-connecting-ip": client,
    },
  });
}

async function world() {
  let clock = Date.now();
  const now = () => clock;
  const server = await RecordServer.create();
  const records = new Map<string, { record_version?: unknown; digest: string; family?: unknown }>();
  const publish = async (record: Parameters<RecordServer["publish"]>[0]) => {
    const sealed = await server.publish(record);
    records.set(sealed.identity_id, sealed);
    return sealed;
  };
  /** A status token for `id`, issued at the world's clock. */
  const statusToken = (id: string) => {
    const record = records.get(id);
    const iat = Math.floor(clock / 1000);
    return server.signStatus({
      identity_id: id,
      family: record?.family,
      lifecycle: "active",
      publication: "published",
      record_version: record?.record_version,
      digest: record?.digest,
      iat,
      exp: iat + 60,
    });
  };
  // The resolver: records and status tokens, every read counted by who asked, at most 120 a
  // minute from the provider's address (verifier and stapler share it, as in production).
  const reads: { who: string; path: string; status: number }[] = [];
  const served: number[] = [];
  const resolver =
    (who: string): FetchLike =>
    async (input, init) => {
      const url = new URL(input);
      while (served.length > 0 && (served[0] as number) <= clock - 60_000) served.shift();
      let response: Response;
      if (served.length >= RESOLVER_LIMIT_PER_MINUTE) {
        response = new Response("rate limited", { status: 429, headers: { "retry-after": "60" } });
      } else {
        served.push(clock);
        const status = /^\/api\/p\/([^/]+)\/status$/.exec(url.pathname)?.[1];
        response =
          status && url.origin === CONTRACT_RESOLVER && records.has(status)
            ? Response.json({ token: await statusToken(status) })
            : await server.fetch(input, init);
      }
      reads.push({ who, path: url.pathname, status: response.status });
      return response;
    };

  const api = await publish(contractRecord());
  const key = await keyPair();
  const agent = await publish(
    agentRecord([key], {
      uses: [{ identity_id: api.identity_id, family: "api", declared_at: new Date().toISOString() }],
    }),
  );
  const host = directoryHost(() => [key]);
  const verifier = server.verifier({ now, fetch: resolver("verifier") });
  const app = new Hono<{ Variables: ProviderVariables }>();
  app.use(
    "/v1/*",
    passportProvider({
      verifier,
      identityId: api.identity_id,
      policy: POLICY,
      action: "orders.read",
      stapling: { resolver: CONTRACT_RESOLVER, fetch: resolver("stapler"), now },
      signatureOptions: { fetch: host.fetch },
    }),
  );
  app.get("/v1/orders", (c) => c.json({ caller: c.get("passport").receipt.caller?.identity_id }));
  const signer = await RequestSigner.create({
    privateJwk: key.privateJwk,
    directory: DIRECTORY,
    identityId: agent.identity_id,
  });
  /** The agent's call, signed now, with its own current status token. */
  const legitimate = async () =>
    app.request(
      await signer.sign(
        new Request(API_URL, {
          headers: { "passport-status": await statusToken(agent.identity_id), "cf-connecting-ip": "192.0.2.10" },
        }),
        clock,
      ),
    );
  return {
    app,
    api,
    agent,
    key,
    reads,
    legitimate,
    advance: (ms: number) => {
      clock += ms;
    },
    now,
  };
}

/**
 * A simulated minute at 100 forged requests a second (the clock moves 10 ms a request), naming
 * unknown passports with unknown keys, the agent's passport with unknown keys, and the agent's
 * passport with its own (known) key, from `clients`; one legitimate call a simulated second.
 */
async function floodFor(w: Awaited<ReturnType<typeof world>>, clients: (i: number) => string) {
  const start = w.reads.length;
  let legitimateOk = 0;
  let legitimateCalls = 0;
  let unstapled = 0;
  for (let i = 0; i < 6000; i++) {
    w.advance(10);
    // Requests arrive as separate events: the provider's background token refresh runs between them.
    if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
    const name = i % 3 === 0 ? mintIdentityId() : w.agent.identity_id;
    const keyid = i % 3 === 2 ? w.key.thumbprint : randomBase64(32).replace(/[+/=]/g, "A").slice(0, 43);
    const answer = await w.app.request(forged(name, keyid, w.now(), clients(i)));
    if (answer.status === 200) throw new Error(`forged request ${i} accepted`);
    if (!answer.headers.get("passport-status")) unstapled++;
    if (i % 100 === 99) {
      legitimateCalls++;
      const call = await w.legitimate();
      if (call.status === 200) legitimateOk++;
      if (!call.headers.get("passport-status")) unstapled++;
    }
  }
  const during = w.reads.slice(start);
  return {
    legitimateCalls,
    legitimateOk,
    unstapled,
    verifierReads: during.filter((r) => r.who === "verifier").length,
    agentReads: during.filter((r) => r.who === "verifier" && r.path.includes(w.agent.identity_id)).length,
    staplerReads: during.filter((r) => r.who === "stapler"),
    refused: during.filter((r) => r.status === 429).length,
  };
}

describe("forged calls cost the provider a bounded handful of resolver reads", () => {
  it("from one address: at most 4 lookups (8 reads) in the minute; every legitimate call and staple holds", async () => {
    const w = await world();
    expect((await w.legitimate()).status).toBe(200);
    const result = await floodFor(w, () => "203.0.113.7");
    console.log("forged calls, one address:", JSON.stringify({ ...result, staplerReads: result.staplerReads.length }));
    expect(result.legitimateOk).toBe(result.legitimateCalls);
    expect(result.verifierReads).toBeLessThanOrEqual(8);
    expect(result.refused).toBe(0);
    expect(result.unstapled).toBe(0);
    // The provider's own token was refreshed during the minute, and never refused.
    expect(result.staplerReads.length).toBeGreaterThanOrEqual(1);
    expect(result.staplerReads.every((r) => r.status === 200)).toBe(true);
  });

  it("from 6000 addresses: at most 20 lookups (40 reads) in the minute, under the resolver's limit", async () => {
    const w = await world();
    expect((await w.legitimate()).status).toBe(200);
    const result = await floodFor(w, (i) => `198.51.${Math.floor(i / 250)}.${i % 250}`);
    console.log(
      "forged calls, many addresses:",
      JSON.stringify({ ...result, staplerReads: result.staplerReads.length }),
    );
    expect(result.legitimateOk).toBe(result.legitimateCalls);
    expect(result.verifierReads).toBeLessThanOrEqual(40);
    expect(result.refused).toBe(0);
    expect(result.unstapled).toBe(0);
    expect(result.staplerReads.every((r) => r.status === 200)).toBe(true);
  });
});

describe("concurrent lookups are coalesced", () => {
  it("twenty concurrent checks of one passport at changing consequence cost one record read", async () => {
    const server = await RecordServer.create();
    const api = await server.publish(contractRecord());
    let reads = 0;
    const verifier = server.verifier({
      fetch: async (input, init) => {
        if (input.endsWith(".json")) reads++;
        // The answer takes a moment, as over a network, so the decisions overlap.
        await new Promise((resolve) => setTimeout(resolve, 5));
        return server.fetch(input, init);
      },
    });
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => verifier.verify(api.identity_id, { family: "api", consequence: "changing" })),
    );
    expect(outcomes.every((outcome) => outcome.outcome === "ok")).toBe(true);
    expect(reads).toBe(1);
  });
});
