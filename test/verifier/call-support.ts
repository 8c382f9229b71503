// The call path's test fixtures: an agent's key pair and key directory, its record with a proven
// `signing_keys` binding, an API record, a policy with a caller side, shared by the call-path tests.

import { jwkThumbprint } from "../../packages/verifier/src/call/web-bot-auth.ts";
import { RequestSigner } from "../../packages/verifier/src/fetch.ts";
import type { PolicyDocument } from "../../packages/verifier/src/index.ts";
import { webBotAuth } from "../../packages/verifier/src/provider.ts";
import { type ContractRecord, contractRecord, RecordServer, verified } from "./support.ts";

export const DIRECTORY = "https://agent.example/.well-known/http-message-signatures-directory";
export const API_URL = "https://api.contract.example/v1/orders";

export async function keyPair() {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const privateJwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  const publicJwk = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
  return { privateJwk, publicJwk, thumbprint: await jwkThumbprint(publicJwk) };
}
export type Key = Awaited<ReturnType<typeof keyPair>>;

/** The agent's key directory host: serves whatever keys it is given now. */
export function directoryHost(keys: () => Key[]) {
  let reads = 0;
  return {
    reads: () => reads,
    fetch: async (input: string) => {
      if (input !== DIRECTORY) return new Response("not found", { status: 404 });
      reads++;
      return Response.json({ passport: "psp", keys: keys().map((k) => k.publicJwk) });
    },
  };
}

export function agentRecord(proven: Key[], overrides: Partial<ContractRecord> = {}): ContractRecord {
  return contractRecord({
    family: "agent",
    display_name: "Contract test agent",
    bindings: [
      {
        class: "signing_keys",
        value: DIRECTORY,
        bound_at: new Date().toISOString(),
        verification: { ...verified("evd_keys"), method: "document_names_id" },
        keys: proven.map((k) => ({ thumbprint: k.thumbprint, alg: "EdDSA" })),
      },
    ],
    evidence: [],
    ...overrides,
  });
}

export function policy(caller: Record<string, unknown> = { required: true }): PolicyDocument {
  return {
    policy_format: "svc.passport_policy",
    version: 1,
    actions: { "orders.create": { family: "api", caller: caller as never } },
  } as PolicyDocument;
}

export async function setUp(options: { uses?: boolean; apiOverrides?: Partial<ContractRecord> } = {}) {
  const server = await RecordServer.create();
  const api = await server.publish(contractRecord(options.apiOverrides ?? {}));
  const key = await keyPair();
  let directoryKeys = [key];
  const host = directoryHost(() => directoryKeys);
  const agent = await server.publish(
    agentRecord([key], {
      ...(options.uses === false
        ? {}
        : { uses: [{ identity_id: api.identity_id, family: "api", declared_at: new Date().toISOString() }] }),
    }),
  );
  const verifier = server.verifier({ now: Date.now, callerSignatures: webBotAuth({ fetch: host.fetch }) });
  const signer = (k: Key = key, extra: { validitySeconds?: number } = {}) =>
    RequestSigner.create({ privateJwk: k.privateJwk, directory: DIRECTORY, identityId: agent.identity_id, ...extra });
  return {
    server,
    api,
    agent,
    key,
    host,
    verifier,
    signer,
    setDirectory: (keys: Key[]) => {
      directoryKeys = keys;
    },
  };
}

export const call = (p: PolicyDocument, apiId: string, request: Request) =>
  ({ policy: p, action: "orders.create", api: { identityId: apiId }, caller: { request } }) as const;

/**
 * A request signed by hand (RFC 9421, the Web Bot Auth profile) over exactly `components`, as a
 * third-party signer might: the signature base is each component's line and the parameters.
 */
export async function signedOver(components: string[], key: Key, agent: string, method: string): Promise<Request> {
  const url = new URL(API_URL);
  const headers = new Headers({ "signature-agent": JSON.stringify(DIRECTORY), "passport-agent": agent });
  const values: Record<string, string> = {
    "@method": method,
    "@authority": url.host,
    "@path": url.pathname,
    "signature-agent": headers.get("signature-agent") ?? "",
    "passport-agent": agent,
  };
  const created = Math.floor(Date.now() / 1000);
  const params = `(${components.map((c) => `"${c}"`).join(" ")});created=${created};expires=${created + 30};keyid="${key.thumbprint}";alg="ed25519";tag="web-bot-auth"`;
  const base = [...components.map((c) => `"${c}": ${values[c]}`), `"@signature-params": ${params}`].join("\n");
  const { alg: _alg, key_ops: _ops, ext: _ext, ...material } = key.privateJwk;
  const privateKey = await crypto.subtle.importKey("jwk", material, { name: "Ed25519" }, false, ["sign"]);
  const signature = new Uint8Array(await crypto.subtle.sign("Ed25519", privateKey, new TextEncoder().encode(base)));
  headers.set("signature-input", `sig1=${params}`);
  headers.set("signature", `sig1=:${btoa(String.fromCharCode(...signature))}:`);
  return new Request(API_URL, { method, headers });
}
