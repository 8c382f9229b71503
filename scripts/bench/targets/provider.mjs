// `npm run bench -- provider`: what the provider middleware (@passport/verifier/provider) adds to
// each call it decides, in Node: a Hono app whose route sits behind `passportProvider` (the
// caller's Web Bot Auth signature checked against its proven key, both passports decided at
// higher consequence, the caller's declared use of the API checked as the demo's policy does, the
// API's own token stapled), compared with the same app and route without it. The caller sends its own current status token (`Passport-Status`), the API's token is held by
// the stapler, and the key directory is read once: the steady state of a busy provider. Records,
// tokens and the directory come from memory, so only the middleware's own work counts. The one
// cryptographic act a call needs is the caller's signature, so the same run also times one Ed25519
// verification (Web Crypto, over a signature base of the same size) against an empty call. Targets:
// the middleware adds under 1 ms per call (p50), and at most twice one Ed25519 verification.
import { sealRecord } from "@passport/domain";
import { Hono } from "hono";
import { jwkThumbprint } from "../../../packages/verifier/src/call/web-bot-auth.ts";
import { RequestSigner } from "../../../packages/verifier/src/fetch.ts";
import { Verifier } from "../../../packages/verifier/src/index.ts";
import { passportProvider } from "../../../packages/verifier/src/provider.ts";
import { spread } from "../lib/compare.mjs";
import { comparePaired, signRecords, statusToken } from "../lib/in-process.mjs";
import { sampleRecord } from "../lib/records.mjs";

export const description =
  "provider middleware per call (signature, both passports at higher, uses link, stapled tokens) against the same route without it";
export const defaults = { rounds: 7, seconds: 3, warmup: 2 };

const RESOLVER = "https://resolver.bench";
const API_URL = "https://api.bench.example/v1/orders";
const DIRECTORY = "https://agent.bench.example/.well-known/http-message-signatures-directory";
/** The added cost per call the middleware must stay under (p50, ms). */
const TARGET_MS = 1;
/** The most the middleware may add, in Ed25519 verifications measured in the same run (issue 38). */
const TARGET_VERIFICATIONS = 2;

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
};

export async function run({ options, log }) {
  const agentKey = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const publicJwk = await crypto.subtle.exportKey("jwk", agentKey.publicKey);
  const privateJwk = await crypto.subtle.exportKey("jwk", agentKey.privateKey);
  const thumbprint = await jwkThumbprint(publicJwk);

  const fresh = new Date(Date.now() + 6 * 86_400_000).toISOString();
  const apiRecord = await sampleRecord(1, `sha-256:${"A".repeat(43)}`);
  const { digest: _, ...agentContent } = await sampleRecord(2, `sha-256:${"B".repeat(43)}`);
  const agentRecord = await sealRecord({
    ...agentContent,
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
    uses: [{ identity_id: apiRecord.identity_id, family: "api", declared_at: "2026-10-20T09:00:00.000Z" }],
  });
  const { jwks, records, privateKey } = await signRecords([apiRecord, agentRecord]);
  const served = new Map(records.map((r) => [r.id, r]));
  const apiId = apiRecord.identity_id;
  const agentId = agentRecord.identity_id;
  const fetch = async (url) => {
    const path = new URL(url).pathname;
    const status = /^\/api\/p\/([^/]+)\/status$/.exec(path);
    if (status) {
      return Response.json({ token: await statusToken(served.get(decodeURIComponent(status[1])).record, privateKey) });
    }
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
      origin: new URL(API_URL).origin,
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
      new Request(API_URL, { headers: { "passport-status": await statusToken(agentRecord, privateKey) } }),
    );
    headers = Object.fromEntries(signed.headers);
  };
  await refresh();
  const call = (app) => () => app.fetch(new Request(API_URL, { headers }));
  for (const [name, app] of [
    ["with the middleware", guarded],
    ["without", plain],
  ]) {
    const answer = await call(app)();
    if (answer.status !== 200) throw new Error(`${name}: HTTP ${answer.status} ${await answer.text()}`);
  }
  if (!(await call(guarded)()).headers.get("passport-status")) throw new Error("the API's token is not stapled");
  /** One call, its answer read to the end. */
  const timed = (app) => async () => (await call(app)()).arrayBuffer();

  // One Ed25519 verification of a signature base as long as the request's.
  const base = new TextEncoder().encode(
    `"@method": GET\n"@authority": api.bench.example\n"@path": /v1/orders\n"signature-agent": "${DIRECTORY}"\n"passport-agent": ${agentId}\n"@signature-params": ${headers["signature-input"].slice(5)}`,
  );
  const signature = await crypto.subtle.sign("Ed25519", agentKey.privateKey, base);
  const verifyKey = await crypto.subtle.importKey("jwk", publicJwk, { name: "Ed25519" }, false, ["verify"]);
  const verifyOnce = async () => {
    if (!(await crypto.subtle.verify("Ed25519", verifyKey, signature, base))) throw new Error("does not verify");
  };
  const nothing = async () => {};

  const { results, runs } = await comparePaired(
    [
      {
        name: "route behind passportProvider",
        baseline: "same route, no middleware",
        subject: timed(guarded),
        reference: timed(plain),
        before: refresh,
      },
      { name: "one Ed25519 verification", baseline: "an empty async call", subject: verifyOnce, reference: nothing },
    ],
    { ...options, log },
  );
  const [result] = results;
  const added = spread(runs[0].subject.map((s, r) => s.p50 - runs[0].reference[r].p50));
  const ed25519 = spread(runs[1].subject.map((s, r) => s.p50 - runs[1].reference[r].p50));
  // Per round, the middleware's added cost in verifications of that same round.
  const inVerifications = spread(
    runs[0].subject.map(
      (s, r) => (s.p50 - runs[0].reference[r].p50) / (runs[1].subject[r].p50 - runs[1].reference[r].p50),
    ),
  );
  const ms = (v) => `${v.toFixed(3)} ms`;
  return {
    results,
    notes: [
      `provider: added per call (p50) ${ms(added.median)} (${ms(added.min)}..${ms(added.max)}); ` +
        `p99 with the middleware ${ms(result.subject.p99.median)}`,
      `provider: one Ed25519 verification (p50) ${ms(ed25519.median)} (${ms(ed25519.min)}..${ms(ed25519.max)}); ` +
        `the middleware adds ${inVerifications.median.toFixed(2)} of them (target at most ${TARGET_VERIFICATIONS}): ` +
        (inVerifications.median <= TARGET_VERIFICATIONS ? "met" : "missed"),
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
      {
        name: "provider middleware added cost per call, in Ed25519 verifications of the same run",
        value: inVerifications.median,
        target: TARGET_VERIFICATIONS,
        at_most: true,
        ok: inVerifications.median <= TARGET_VERIFICATIONS,
        detail: `one Ed25519 verification ${ms(ed25519.median)} at p50 in this run`,
      },
    ],
  };
}
