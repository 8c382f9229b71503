// The demo API of `npm start` (docs/reciprocal-trust.md, Call path): the "Demo Payments API"
// passport's orders at https://payments.demo.example/v2 (its verified endpoint), served through
// @passport/verifier/provider. Each call must be signed (RFC 9421,
// Web Bot Auth) by an agent whose passport the service proved the signing key of; both passports
// are decided at higher consequence, this API staples its own status token to every answer, and a
// replayed call is refused (a Durable Object keeps the nonces).
import { loadPolicy, Verifier } from "@passport/verifier";
import { type ProviderVariables, passportProvider } from "@passport/verifier/provider";
import { Hono, type MiddlewareHandler } from "hono";
import { nonceStore } from "./nonce-ledger.ts";

export { NonceLedger } from "./nonce-ledger.ts";

/** What this API asks of a call to read orders (docs/policy.md for the format). */
export const POLICY = loadPolicy({
  policy_format: "svc.passport_policy",
  version: 1,
  actions: {
    "orders.read": {
      family: "api",
      consequence: "higher",
      caller: { required: true, family: "agent", consequence: "higher", uses_link: true, signature_window: "60s" },
    },
  },
});

const ORDERS = [
  { id: "ord_1001", amount: { value: "42.00", currency: "EUR" }, status: "paid" },
  { id: "ord_1002", amount: { value: "7.50", currency: "EUR" }, status: "refunded" },
];

type App = { Bindings: Env; Variables: ProviderVariables };

/** The provider middleware, made once this isolate knows which passport it answers as. */
let provider: { identityId: string; handler: MiddlewareHandler<App> } | undefined;

async function providerFor(env: Env): Promise<typeof provider> {
  if (provider) return provider;
  const identityId = await env.DEMO_CONFIG.get("API_PASSPORT");
  if (!identityId) return undefined;
  const resolverFetch = (input: string, init?: RequestInit) => env.RESOLVER.fetch(input, init);
  const verifier = new Verifier({
    resolver: env.RESOLVER_URL,
    fetch: resolverFetch,
    jwks: JSON.parse(env.SIGNING_JWKS),
  });
  provider = {
    identityId,
    handler: passportProvider({
      verifier,
      identityId,
      policy: POLICY,
      action: "orders.read",
      origin: env.PUBLIC_ORIGIN,
      // A payments API refuses every replayed call, reads too: a replayed read leaks the orders
      // to whoever captured the request (the default refuses the unsafe methods only).
      replay: { store: nonceStore(env), methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] },
      stapling: { resolver: env.RESOLVER_URL, fetch: resolverFetch },
      // The agents' key directories are on the simulated hosts here; deployed, the default fetch.
      signatureOptions: { fetch: (input, init) => env.HOSTS.fetch(input, init) },
    }) as unknown as MiddlewareHandler<App>,
  };
  return provider;
}

const app = new Hono<App>();

app.get("/health", (c) => c.text("ok"));

app.use("*", async (c, next) => {
  const configured = await providerFor(c.env);
  if (!configured) {
    return c.json(
      {
        type: "urn:svc:passport:problem:unavailable",
        title: "Unavailable",
        status: 503,
        detail: "The demo API does not know its passport yet: `npm start` sets it once the demo passports exist.",
      },
      503,
      { "content-type": "application/problem+json", "retry-after": "5" },
    );
  }
  return next();
});

// The provider's well-known document: names the passport a consumer discovers for this origin
// (the same document the service checks to prove the endpoint binding).
app.get("/.well-known/passport-identity.json", async (c) => {
  const configured = await providerFor(c.env);
  return c.json({ identities: [{ identity_id: configured?.identityId }] });
});

app.use("/v2/*", async (c, next) => {
  const configured = await providerFor(c.env);
  return (configured as NonNullable<typeof provider>).handler(c, next);
});

app.get("/v2/orders", (c) => {
  const decided = c.get("passport");
  return c.json({
    orders: ORDERS,
    // What the middleware decided, for the demo: who called, with which key, and the receipt.
    caller: decided.receipt.caller?.identity_id,
    keyid: decided.sides.caller?.signature?.keyid,
    receipt: decided.receipt,
  });
});

export default app;
