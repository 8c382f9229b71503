// `npm run bench -- provider`: what the provider middleware (@passport/verifier/provider) adds to
// each call it decides, in Node: a Hono app whose route sits behind `passportProvider` (the
// caller's Web Bot Auth signature checked against its proven key, both passports decided at
// higher consequence, the API's own token stapled), compared with the same app and route without
// it. The caller sends its own current status token (`Passport-Status`), the API's token is held by
// the stapler, and the key directory is read once: the steady state of a busy provider. Records,
// tokens and the directory come from memory, so only the middleware's own work counts. Target:
// under 1 ms added per call (p50).
import { performance } from "node:perf_hooks";
import { Hono } from "hono";
import { CompactSign, importJWK } from "jose";
import { jwkThumbprint } from "../../../packages/verifier/src/call/web-bot-auth.ts";
import { RequestSigner } from "../../../packages/verifier/src/fetch.ts";
import { canonicalDigest, Verifier } from "../../../packages/verifier/src/index.ts";
import { passportProvider } from "../../../packages/verifier/src/provider.ts";
import { signingKeyPair } from "../../dev-keys.mjs";
import { spread } from "../lib/compare.mjs";
import { sampleRecord } from "../lib/records.mjs";

export const description =
  "provider middleware per call (signature, both passports at higher, stapled tokens) against the same route without it";
export const defaults = { rounds: 7, seconds: 3, warmup: 2 };

const RESOLVER = "https://resolver.bench";
const API_URL = "https://api.bench.example/v1/orders";
const DIRECTORY = "https://agent.bench.example/.well-known/http-message-signatures-directory";
/** The added cost per call the middleware must stay under (p50, ms). */
const TARGET_MS = 1;

const POLICY = {
  policy_format: "svc.passport_policy",
  version: 1,
  actions: {
    "orders.read": {
      family: "api",
      consequence: "higher",
      caller: { required: true, family: "agent", consequence: "higher" },
    },
  },
};

async function signer() {
  const { publicJwk, privateJwk } = await signingKeyPair("ES256", "bench");
  const key = await importJWK(JSON.parse(privateJwk), "ES256");
  const jws = async (bytes, typ) => {
    const token = await new CompactSign(bytes).setProtectedHeader({ alg: "ES256", kid: "bench", typ }).sign(key);
    return token;
  };
  return { jwks: { keys: [JSON.parse(publicJwk)] }, jws };
}

export async function run({ options, log }) {
  const { jwks, jws } = await signer();
  const agentKey = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const publicJwk = await crypto.subtle.exportKey("jwk", agentKey.publicKey);
  const privateJwk = await crypto.subtle.exportKey("jwk", agentKey.privateKey);
  const thumbprint = await jwkThumbprint(publicJwk);

  const fresh = new Date(Date.now() + 6 * 86_400_000).toISOString();
  const apiRecord = await sampleRecord(1, `sha-256:${"A".repeat(43)}`);
  const agentRecord = {
    ...(await sampleRecord(2, `sha-256:${"B".repeat(43)}`)),
    family: "agent",
    display_name: "Bench agent",
    bindings: [
      {
        class: "signing_keys",
        value: DIRECTORY,
        bound_at: "2026-10-20T09:00:00.000Z",
        verification: {
          state: "verified",
          method: "document_names_id",
          verified_at: new Date().toISOString(),
          fresh_until: fresh,
        },
        keys: [{ thumbprint, alg: "Ed25519" }],
      },
    ],
  };
  const { canonicalJson } = await import("../../../packages/verifier/src/canonical.ts");
  const served = new Map();
  for (const record of [apiRecord, agentRecord]) {
    const { digest: _, ...content } = record;
    const sealed = { ...content, digest: await canonicalDigest(content) };
    const [header, , signature] = (await jws(new TextEncoder().encode(canonicalJson(sealed)), "passport+jws")).split(
      ".",
    );
    served.set(sealed.identity_id, {
      record: sealed,
      text: JSON.stringify(sealed),
      signature: `${header}..${signature}`,
    });
  }
  const statusToken = async (id) => {
    const { record } = served.get(id);
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      identity_id: id,
      family: record.family,
      lifecycle: "active",
      publication: "published",
      record_version: record.record_version,
      digest: record.digest,
      iat: now,
      exp: now + 60,
    };
    return jws(new TextEncoder().encode(JSON.stringify(claims)), "passport-status+jwt");
  };
  const apiId = apiRecord.identity_id;
  const agentId = agentRecord.identity_id;
  const fetch = async (url) => {
    const path = new URL(url).pathname;
    const status = /^\/api\/p\/([^/]+)\/status$/.exec(path);
    if (status) return Response.json({ token: await statusToken(decodeURIComponent(status[1])) });
    const id = /^\/api\/p\/([^/]+)\.json$/.exec(path)?.[1];
    const r = id && served.get(decodeURIComponent(id));
    if (!r) return new Response("not found", { status: 404 });
    return new Response(r.text, {
      headers: {
        "content-type": "application/json",
        "cache-control": "public, max-age=15",
        "passport-signature": r.signature,
      },
    });
  };
  const directory = async () => Response.json({ keys: [publicJwk] });

  const verifier = new Verifier({ resolver: RESOLVER, fetch, jwks });
  const guarded = new Hono();
  guarded.use(
    "/v1/*",
    passportProvider({
      verifier,
      identityId: apiId,
      policy: POLICY,
      action: "orders.read",
      stapling: { resolver: RESOLVER, fetch },
      signatureOptions: { fetch: directory },
    }),
  );
  const plain = new Hono();
  for (const app of [guarded, plain]) app.get("/v1/orders", (c) => c.json({ orders: [] }));

  const agent = await RequestSigner.create({ privateJwk, directory: DIRECTORY, identityId: agentId });
  // A signed request with the agent's current token, re-made for every measurement (window 60 s, tokens 30 s).
  let headers;
  const refresh = async () => {
    const signed = await agent.sign(
      new Request(API_URL, { headers: { "passport-status": await statusToken(agentId) } }),
    );
    headers = Object.fromEntries(signed.headers);
  };
  await refresh();
  const subject = async () => guarded.fetch(new Request(API_URL, { headers }));
  const reference = async () => plain.fetch(new Request(API_URL, { headers }));
  for (const [name, op] of [
    ["with the middleware", subject],
    ["without", reference],
  ]) {
    const answer = await op();
    if (answer.status !== 200) throw new Error(`${name}: HTTP ${answer.status} ${await answer.text()}`);
  }
  if (!(await subject()).headers.get("passport-status")) throw new Error("the API's token is not stapled");

  const measure = async (op, seconds) => {
    await refresh();
    const latencies = [];
    const start = performance.now();
    const end = start + seconds * 1000;
    while (performance.now() < end) {
      const t0 = performance.now();
      const answer = await op();
      await answer.arrayBuffer();
      latencies.push(performance.now() - t0);
    }
    const elapsed = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    return { rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99) };
  };
  log("warming up");
  await measure(subject, options.warmup);
  await measure(reference, options.warmup);
  const runs = { subject: [], reference: [] };
  for (let round = 0; round < options.rounds; round++) {
    log(`round ${round + 1} of ${options.rounds}`);
    const order = round % 2 === 0 ? ["subject", "reference"] : ["reference", "subject"];
    for (const side of order) runs[side].push(await measure(side === "subject" ? subject : reference, options.seconds));
  }
  const side = (list) => ({
    rps: spread(list.map((s) => s.rps)),
    p50: spread(list.map((s) => s.p50)),
    p99: spread(list.map((s) => s.p99)),
  });
  const ratio = (key) => spread(runs.subject.map((s, r) => s[key] / runs.reference[r][key]));
  const added = spread(runs.subject.map((s, r) => s.p50 - runs.reference[r].p50));
  const result = {
    name: "route behind passportProvider",
    baseline: "same route, no middleware",
    subject: side(runs.subject),
    reference: side(runs.reference),
    ratios: { rps: ratio("rps"), p50: ratio("p50"), p99: ratio("p99") },
  };
  const ms = (v) => `${v.toFixed(3)} ms`;
  return {
    results: [result],
    notes: [
      `provider: added per call (p50) ${ms(added.median)} (${ms(added.min)}..${ms(added.max)}); ` +
        `p99 with the middleware ${ms(result.subject.p99.median)}`,
    ],
    checks: [
      {
        name: "provider middleware added cost per call, p50 (ms)",
        value: added.median,
        target: TARGET_MS,
        at_most: true,
        ok: added.median < TARGET_MS,
        detail:
          "higher on both sides: each side's stapled token proves its cached record current; one Ed25519 signature",
      },
    ],
  };
}
