// The call path's "Done when" (docs/reciprocal-trust.md, Call path), on the local service started
// exactly as `npm start` starts it: an agent signs a request to the demo API (workers/demo-api,
// the provider middleware); the API accepts it; a request signed by a key not proven for the agent
// is refused; after the agent passport is revoked, the next call is refused at higher consequence.
// A fresh agent of its own, so the shared demo agent stays as `npm start` made it.
import { describe, expect, inject, it } from "vitest";
import { PassportCheckError, passportFetch, RequestSigner } from "../../../packages/verifier/src/fetch.ts";
import { Verifier } from "../../../packages/verifier/src/index.ts";

const service = inject("service");
const API_ORIGIN = "https://payments.demo.example";
const KEY_DIRECTORY_PATH = "/.well-known/http-message-signatures-directory";
// biome-ignore lint/suspicious/noExplicitAny: the service's JSON answers, read as the test needs them
type Body = Record<string, any>;

async function control(method: string, path: string, body?: unknown): Promise<Body> {
  const response = await fetch(`${service.control}${path}`, {
    method,
    headers: { authorization: `Bearer ${service.token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await response.json()) as Body;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function edKey() {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  return {
    privateJwk: (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey,
    publicJwk: (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey,
  };
}

/** An agent passport whose signing_keys binding the service verified against its key directory. */
async function provenAgent() {
  const host = `agent-${crypto.randomUUID().slice(0, 8)}.example.com`;
  const directory = `https://${host}${KEY_DIRECTORY_PATH}`;
  const key = await edKey();
  const created = await control("POST", "/v1/passports", {
    organisation_id: "org_demo",
    family: "agent",
    display_name: "Call path test agent",
    environment: "production",
    bindings: [{ class: "signing_keys", value: directory }],
  });
  const id = created.identity_id as string;
  const fixture = await fetch(`${service.hosts}/hosts/${host}`, {
    method: "PUT",
    body: JSON.stringify({
      paths: {
        [KEY_DIRECTORY_PATH]: {
          content_type: "application/http-message-signatures-directory+json",
          body: { passport: id, keys: [key.publicJwk] },
        },
      },
    }),
  });
  expect(fixture.status).toBe(204);
  const proven = await control("POST", `/v1/passports/${id}/bindings/${created.bindings[0].id}/verify`);
  expect(proven.result).toBe("verified");
  return { id, directory, key };
}

/** The local demo API's address for a request to its public origin. */
const local = (request: Request) =>
  request.url.startsWith(API_ORIGIN) ? new Request(request.url.replace(API_ORIGIN, service.demoApi), request) : request;

/**
 * The agent's fetch: checks the API's passport at higher, signs as the agent, reaches the local
 * demo API; each request sent is kept in `sent` (to replay it).
 */
async function agentFetch(signer: RequestSigner, sent: Request[] = []) {
  const jwks = await (await fetch(`${service.resolver}/.well-known/jwks.json`)).json();
  return passportFetch({
    verifier: new Verifier({ resolver: service.resolver, jwks }),
    expectation: { consequence: "higher" },
    signer,
    fetch: (request) => {
      sent.push(request.clone());
      return fetch(local(request));
    },
  });
}

describe("the call path on npm start", () => {
  it("accepts a signed call, refuses a replay of it, an unproven key, and the agent once revoked", async () => {
    const agent = await provenAgent();
    const signer = await RequestSigner.create({
      privateJwk: agent.key.privateJwk,
      directory: agent.directory,
      identityId: agent.id,
    });
    const sent: Request[] = [];
    const call = await agentFetch(signer, sent);

    // The demo API's policy asks the caller to declare it: refused until the agent does.
    const unlinked = await call(`${API_ORIGIN}/v2/orders`);
    expect(unlinked.status).toBe(403);
    expect(await unlinked.json()).toMatchObject({ check: "caller.uses_link" });
    const payments = service.demo.find((p) => p.name === "Demo Payments API")?.id as string;
    await control("POST", `/v1/passports/${agent.id}/uses`, { identity_id: payments });
    // The API's organisation sees the agent among those that declare its passport (its Dashboard page).
    const declarers = await control("GET", `/v1/passports/${payments}/declared-by`);
    expect(declarers.items.map((item: Body) => item.identity_id)).toContain(agent.id);
    // The development sign-in's session cookie, as a browser signed in with the printed token sends it.
    const page = await fetch(`${service.control}/dashboard/passports/${payments}`, {
      headers: { cookie: `passport-session=${service.token}` },
    });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(agent.id);

    const accepted = await call(`${API_ORIGIN}/v2/orders`);
    const body = (await accepted.json()) as Body;
    expect(accepted.status).toBe(200);
    expect(body.caller).toBe(agent.id);
    expect(body.receipt).toMatchObject({ decision: "allow", caller: { identity_id: agent.id } });
    // The API staples its own current status token.
    expect(accepted.headers.get("passport-status")).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    // The same signed request, sent again within its window: the API's nonce store refuses it.
    const replay = await fetch(local(sent.at(-1) as Request));
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ check: "caller.signature", detail: expect.stringMatching(/already/) });

    const stranger = await edKey();
    const forged = await agentFetch(
      await RequestSigner.create({ privateJwk: stranger.privateJwk, directory: agent.directory, identityId: agent.id }),
    );
    const refused = await forged(`${API_ORIGIN}/v2/orders`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({
      type: "urn:svc:passport:problem:caller-signature",
      check: "caller.signature",
    });

    await control("PATCH", `/v1/passports/${agent.id}/state`, { lifecycle: "revoked", reason: "key compromise" });
    // The next call is refused: the provider decides the caller at higher, on its current status.
    const next = await call(`${API_ORIGIN}/v2/orders`);
    expect(next.status).not.toBe(200);
    expect(((await next.json()) as { type: string }).type).toBe("urn:svc:passport:problem:caller-passport");
    // Once the revoked record is served, the refusal names the agent's state.
    let settled: Record<string, unknown> = {};
    for (let attempt = 0; attempt < 20; attempt++) {
      const answer = await call(`${API_ORIGIN}/v2/orders`);
      settled = { status: answer.status, ...((await answer.json()) as Record<string, unknown>) };
      if (answer.status === 403) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(settled).toMatchObject({ status: 403, decision: "deny", check: "caller.state" });
  });

  it("the consumer refuses to call an origin whose passport it cannot establish", async () => {
    const agent = await provenAgent();
    const call = await agentFetch(
      await RequestSigner.create({
        privateJwk: agent.key.privateJwk,
        directory: agent.directory,
        identityId: agent.id,
      }),
    );
    const error = await call("https://unknown-api.demo.example/v2/orders").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PassportCheckError);
  });
});
