// Signed A2A agent cards against the local service (npm start): the four test vectors (a
// card signed by the passport's proven key, by a key the passport never proved, by a key it
// withdrew at a rotation, and an unsigned card) give four distinct answers, through the SDK
// (fetchAgentCard, Verifier.resolve, verifyAgentCard) and through the built `passport verify-card`.
// The agent's key directory is played by the hosts simulator; the cards by a loopback server.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { calculateJwkThumbprint } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  agentCardPayload,
  base64urlEncode,
  fetchAgentCard,
  Verifier,
  verifyAgentCard,
} from "../../../packages/verifier/src/index.ts";
import { root } from "../../local-service.ts";

const service = inject("service");
const bin = join(root, "packages", "verifier", "src", "cli", "bin.ts");
const run = promisify(execFile);
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
  const publicJwk = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
  return {
    privateKey: pair.privateKey,
    publicJwk,
    thumbprint: await calculateJwkThumbprint(publicJwk as never, "sha256"),
  };
}
type Key = Awaited<ReturnType<typeof edKey>>;

const CARD = {
  protocolVersion: "0.3.0",
  name: "Card test agent",
  description: "Answers questions.",
  url: "https://agent.example/a2a",
  version: "1.0.0",
  capabilities: {},
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "answer", name: "Answer", description: "Answers a question.", tags: ["qa"] }],
};

/** Signs a card as A2A section 8.4 says: a JWS over its canonical JSON, detached, naming the key by thumbprint. */
async function signed(card: Record<string, unknown>, key: Key) {
  const header = base64urlEncode(new TextEncoder().encode(JSON.stringify({ alg: "EdDSA", kid: key.thumbprint })));
  const input = new TextEncoder().encode(`${header}.${agentCardPayload(card)}`);
  const signature = base64urlEncode(new Uint8Array(await crypto.subtle.sign("Ed25519", key.privateKey, input)));
  return { ...card, signatures: [{ protected: header, signature }] };
}

let id: string;
let cards: Record<string, unknown>;
let base: string;
let server: ReturnType<typeof createServer>;

beforeAll(async () => {
  // An agent whose directory served `withdrawn`, then rotated to `current`: the record proves
  // `current` and lists `withdrawn` as withdrawn. `stranger` was never in the directory.
  const [withdrawn, current, stranger] = [await edKey(), await edKey(), await edKey()];
  const host = `agent-${crypto.randomUUID().slice(0, 8)}.example.com`;
  const created = await control("POST", "/v1/passports", {
    organisation_id: "org_demo",
    family: "agent",
    display_name: "Card test agent",
    environment: "production",
    bindings: [{ class: "signing_keys", value: `https://${host}${KEY_DIRECTORY_PATH}` }],
  });
  id = created.identity_id as string;
  const prove = async (keys: Key[]) => {
    const fixture = await fetch(`${service.hosts}/hosts/${host}`, {
      method: "PUT",
      body: JSON.stringify({
        paths: {
          [KEY_DIRECTORY_PATH]: {
            content_type: "application/http-message-signatures-directory+json",
            body: { passport: id, keys: keys.map((k) => k.publicJwk) },
          },
        },
      }),
    });
    expect(fixture.status).toBe(204);
    const proof = await control("POST", `/v1/passports/${id}/bindings/${created.bindings[0].id}/verify`);
    expect(proof.result).toBe("verified");
  };
  await prove([withdrawn]);
  await prove([current]);

  cards = {
    // The first card names its passport itself; the CLI is given the id for the others.
    right: await signed({ ...CARD, passport: id }, current),
    stranger: await signed(CARD, stranger),
    withdrawn: await signed(CARD, withdrawn),
    unsigned: CARD,
  };
  server = createServer((request, response) => {
    const card = cards[(request.url ?? "").replace(/^\/|\.json$/g, "")];
    response.writeHead(card ? 200 : 404, { "content-type": "application/json" });
    response.end(JSON.stringify(card ?? { error: "not found" }));
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}, 60_000);

afterAll(() => {
  server?.close();
});

/** The four vectors and the answer each must give, the same through the SDK and the CLI. */
const VECTORS = [
  { card: "right", outcome: "card_signed", exit: 0 },
  { card: "stranger", outcome: "key_not_proven", exit: 1 },
  { card: "withdrawn", outcome: "key_withdrawn", exit: 1 },
  { card: "unsigned", outcome: "card_unsigned", exit: 1 },
] as const;

describe("the four agent card test vectors against the local service", () => {
  it("give four distinct answers through the SDK", async () => {
    const jwks = await (await fetch(`${service.resolver}/.well-known/jwks.json`)).json();
    const verifier = new Verifier({ resolver: service.resolver, jwks });
    const resolved = await verifier.resolve(id, { consequence: "changing" });
    if (resolved.outcome !== "resolved") throw new Error(`not resolved: ${resolved.outcome}`);
    expect(resolved.proof.signature).toBe("verified");
    const answers: string[] = [];
    for (const vector of VECTORS) {
      const fetched = await fetchAgentCard(`${base}/${vector.card}.json`);
      if (!fetched.ok) throw new Error(fetched.detail);
      const check = await verifyAgentCard(fetched.card, resolved.record, {
        fetch: async () => {
          throw new Error("the record carries the proven key: no directory read");
        },
      });
      answers.push(check.ok ? "card_signed" : check.problem);
    }
    expect(answers).toEqual(VECTORS.map((v) => v.outcome));
    expect(new Set(answers).size).toBe(4);
  });

  it("give the same four answers through `passport verify-card`, each with its exit code", async () => {
    const jwks = `${service.resolver}/.well-known/jwks.json`;
    for (const vector of VECTORS) {
      const args = [`${base}/${vector.card}.json`, ...(vector.card === "right" ? [] : [id])];
      let code = 0;
      let stdout: string;
      try {
        ({ stdout } = await run(
          process.execPath,
          ["--experimental-strip-types", bin, "verify-card", ...args, "--jwks", jwks, "--json"],
          { cwd: root, env: { ...process.env, PASSPORT_RESOLVER: service.resolver } },
        ));
      } catch (error) {
        const failed = error as { code: number; stdout: string };
        code = failed.code;
        stdout = failed.stdout;
      }
      const answer = JSON.parse(stdout);
      expect(answer, vector.card).toMatchObject({
        outcome: vector.outcome,
        identity_id: id,
        record_signature: "verified",
      });
      expect(code, vector.card).toBe(vector.exit);
    }
  });

  it("prints a readable answer, and refuses a card URL that is not https as a usage error (exit 2)", async () => {
    const jwks = `${service.resolver}/.well-known/jwks.json`;
    const readable = await run(
      process.execPath,
      ["--experimental-strip-types", bin, "verify-card", `${base}/right.json`, "--jwks", jwks],
      { cwd: root, env: { ...process.env, PASSPORT_RESOLVER: service.resolver } },
    );
    expect(readable.stdout).toMatch(/^OK\s+card_signed\s+http:\/\/127\.0\.0\.1:\d+\/right\.json\s+psp_/);
    await expect(
      run(process.execPath, ["--experimental-strip-types", bin, "verify-card", "http://agent.example/card.json"], {
        cwd: root,
      }),
    ).rejects.toMatchObject({ code: 2 });
  });
});
