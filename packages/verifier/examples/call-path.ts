// The call path against `npm start` (docs/reciprocal-trust.md, Call path): `npm run call-demo`.
//
// 1. The demo agent calls the demo API through `passportFetch`: the API's passport is checked for
//    the URL first (discovered from the provider's well-known document), then the request is
//    signed as the agent (RFC 9421, Web Bot Auth) and sent. The provider middleware checks the
//    signature against the keys the service proved for the agent, both passports at higher
//    consequence, and answers.
// 2. The very request of 1, sent again: refused as a replay (the demo API keeps a nonce store).
// 3. The same call signed by a key the service never proved for the agent: refused.
//
// The agent's key and the demo passports come from `npm start`'s local state; the public origin
// https://payments.demo.example is routed to the demo API Worker on this machine. The resolver's
// and the demo API's addresses are those `npm start` recorded (scripts/with-local-addresses.mjs
// sets them, whatever ports it was given), or PASSPORT_RESOLVER and DEMO_API.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PassportCheckError, passportFetch, RequestSigner } from "../src/fetch.ts";
import { Verifier } from "../src/index.ts";

const root = join(import.meta.dirname, "..", "..", "..");
const resolver = process.env.PASSPORT_RESOLVER ?? "http://127.0.0.1:8787";
const demoApi = process.env.DEMO_API ?? "http://127.0.0.1:8792";
const stateDir = process.env.PASSPORT_STATE_DIR ?? join(root, ".wrangler", "state");
const API_ORIGIN = "https://payments.demo.example";
const KEY_DIRECTORY = "https://agents.demo.example/.well-known/http-message-signatures-directory";

/** Ends the demo saying what was tried and what to do, without a stack trace. */
function giveUp(problem: string): never {
  console.error(
    `${problem}\nStart the local service with \`npm start\` (any ports) and run \`npm run call-demo\` again; it reads the addresses the start recorded in ${join(stateDir, "addresses.json")}, or PASSPORT_RESOLVER and DEMO_API.`,
  );
  process.exit(1);
}

/** Why a fetch failed: the network's error code (ECONNREFUSED, ...) rather than "fetch failed". */
const reason = (error: unknown) =>
  String((error as { cause?: { code?: unknown } }).cause?.code ?? (error as Error).message);

/** A JSON file of the local state, or the demo ends saying `npm start` has not made it yet. */
function stateFile<T>(path: string): T {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return giveUp(`No ${path}: the local service has not been started here yet.`);
  }
}

interface Seeded {
  identity_id: string;
  display_name: string;
  family: string;
}
const passports = stateFile<Seeded[]>(join(stateDir, "demo-passports.json"));
const agent = passports.find((p) => p.family === "agent") ?? giveUp("No demo agent in the local state.");
const agentKey = stateFile<{ privateJwk: JsonWebKey }>(join(root, ".wrangler", "dev-auth", "demo-agent-signing.json"));

// Locally the service's record keys are read from the resolver; deployed, pin them out of band.
const jwksUrl = `${resolver}/.well-known/jwks.json`;
const jwks = await fetch(jwksUrl)
  .then((answer) => answer.json())
  .catch((error: unknown) => giveUp(`Could not read the resolver's keys at ${jwksUrl} (${reason(error)}).`));
const verifier = new Verifier({ resolver, jwks });

/** The last request sent to the demo API, kept to replay it. */
let lastSent: Request | undefined;

/** Sends what is addressed to the demo API's public origin to its Worker on this machine. */
const toLocal = (request: Request) => {
  if (!request.url.startsWith(API_ORIGIN)) return fetch(request);
  lastSent = new Request(request.url.replace(API_ORIGIN, demoApi), request);
  return fetch(lastSent.clone()).catch((error: unknown) =>
    giveUp(`Could not reach the demo API at ${demoApi} (${reason(error)}).`),
  );
};

/** Prints the provider's answer: what it accepted, or which check refused. */
async function report(label: string, answer: Response): Promise<void> {
  const body = (await answer.json()) as Record<string, unknown>;
  console.log(`${label}: HTTP ${answer.status}`);
  if (answer.ok) {
    console.log(
      `  accepted: caller ${String(body.caller)}, key ${String(body.keyid)}, decision ${
        (body.receipt as { decision: string }).decision
      }`,
    );
  } else {
    console.log(`  refused: ${String(body.check)} (${String(body.type)}): ${String(body.detail)}`);
  }
}

async function call(signer: RequestSigner, label: string): Promise<void> {
  const agentFetch = passportFetch({
    verifier,
    // The API's passport must be active, with a verified endpoint covering the URL, right now.
    expectation: { consequence: "higher" },
    signer,
    fetch: toLocal,
  });
  try {
    await report(label, await agentFetch(`${API_ORIGIN}/v2/orders`));
  } catch (error) {
    if (!(error instanceof PassportCheckError)) throw error;
    console.log(`${label}: not sent: ${error.message}`);
  }
}

await call(
  await RequestSigner.create({
    privateJwk: agentKey.privateJwk,
    directory: KEY_DIRECTORY,
    identityId: agent.identity_id,
  }),
  `Signed by the demo agent's proven key (${agent.identity_id})`,
);

if (lastSent) await report("The same signed request, sent again", await fetch(lastSent));

const stranger = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
await call(
  await RequestSigner.create({
    privateJwk: (await crypto.subtle.exportKey("jwk", stranger.privateKey)) as JsonWebKey,
    directory: KEY_DIRECTORY,
    identityId: agent.identity_id,
  }),
  "Signed by a key not proven for the agent",
);
