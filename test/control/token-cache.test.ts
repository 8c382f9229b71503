import { env } from "cloudflare:workers";
import { DEVELOPMENT_ISSUER } from "@passport/domain";
import { importJWK, SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { signingKeyPair } from "../../scripts/dev-keys.mjs";
import { authenticate, type Principal, verifiedTokens } from "../../workers/control/src/access/authenticate.ts";
import { answerToError } from "../../workers/control/src/api/problem.ts";
import { Refusal } from "../../workers/control/src/failures.ts";

// The per-isolate cache of verified tokens (docs/auth.md, "Verified-token cache") must never accept
// what a fresh verification would refuse: a token past its `exp` or before its `nbf`, a token
// verified under another configuration, and tokens beyond its capacity are all decided as if
// nothing were cached.

const AUDIENCE = "passport-dashboard";
let keys: { publicJwk: string; privateJwk: string };
let otherKeys: { publicJwk: string; privateJwk: string };

beforeAll(async () => {
  keys = await signingKeyPair("ES256");
  otherKeys = await signingKeyPair("ES256");
});

afterEach(() => {
  vi.useRealTimers();
});

const seconds = () => Math.floor(Date.now() / 1000);

async function token(
  claims: { sub?: string; exp?: number; nbf?: number; iss?: string; aud?: string } = {},
  privateJwk = keys.privateJwk,
) {
  const jwk = JSON.parse(privateJwk);
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: jwk.kid })
    .setIssuer(claims.iss ?? DEVELOPMENT_ISSUER)
    .setAudience(claims.aud ?? AUDIENCE)
    .setSubject(claims.sub ?? "cache-user")
    .setExpirationTime(claims.exp ?? seconds() + 600);
  if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf);
  return jwt.sign(await importJWK(jwk, "ES256"));
}

/** The development configuration trusting `keys` (the bench's and `npm start`'s). */
const development = () => ({
  ENVIRONMENT: "development",
  AUTH_ISSUER: "https://idp.test/",
  AUTH_AUDIENCE: AUDIENCE,
  AUTH_JWKS_URL: "https://idp.test/.well-known/jwks.json",
  DEV_AUTH_PUBLIC_JWK: keys.publicJwk,
  // Where the key set of AUTH_JWKS_URL comes from (the simulated identity provider), not the internet.
  IDENTITY_PROVIDER: env.TEST_IDENTITY_PROVIDER,
});

/** The subject `token` authenticates as under `configuration`, or the status it is refused with. */
async function outcome(jwt: string, configuration: Parameters<typeof authenticate>[1]): Promise<string | number> {
  try {
    const principal: Principal = await authenticate(new Headers({ authorization: `Bearer ${jwt}` }), configuration);
    return principal.subject;
  } catch (error) {
    // The status the API answers a refusal with, through its one error mapping.
    if (error instanceof Refusal) return answerToError(error).status;
    return String(error);
  }
}

describe("verified-token cache", () => {
  it("refuses a cached token once it has expired, and one used before its nbf", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.now();
    const expiring = await token({ sub: "expiring", exp: seconds() + 60 });
    expect(await outcome(expiring, development())).toBe("expiring");
    // Still inside the 30 s tolerance after exp: accepted, as jose would.
    vi.setSystemTime(start + 80_000);
    expect(await outcome(expiring, development())).toBe("expiring");
    vi.setSystemTime(start + 95_000);
    expect(await outcome(expiring, development())).toBe(401);

    vi.setSystemTime(start);
    const early = await token({ sub: "early", nbf: seconds() + 20 });
    expect(await outcome(early, development())).toBe("early");
    // The clock steps back: the token is now more than the tolerance before its nbf.
    vi.setSystemTime(start - 20_000);
    expect(await outcome(early, development())).toBe(401);
  });

  it("refuses a token verified under one configuration when presented under another", async () => {
    const jwt = await token({ sub: "configured" });
    expect(await outcome(jwt, development())).toBe("configured");
    for (const [name, configuration] of [
      ["another audience", { ...development(), AUTH_AUDIENCE: "another-audience" }],
      ["the production environment", { ...development(), ENVIRONMENT: "production" }],
      ["another development key", { ...development(), DEV_AUTH_PUBLIC_JWK: otherKeys.publicJwk }],
    ] as const) {
      expect(await outcome(jwt, configuration), name).toBe(401);
    }
    // An identity provider's token, verified under its issuer, is refused under another issuer.
    const provider = { ...development(), ENVIRONMENT: "production" };
    const idpJwk = JSON.parse(env.TEST_IDP_PRIVATE_JWK);
    const idpToken = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: idpJwk.kid })
      .setIssuer("https://idp.test/")
      .setAudience(AUDIENCE)
      .setSubject("provider-user")
      .setExpirationTime(seconds() + 600)
      .sign(await importJWK(idpJwk, "RS256"));
    expect(await outcome(idpToken, provider)).toBe("provider-user");
    expect(await outcome(idpToken, { ...provider, AUTH_ISSUER: "https://other-idp.test/" })).toBe(401);
    // The configuration it was verified under still accepts it.
    expect(await outcome(jwt, development())).toBe("configured");
  });

  it("stays bounded when full, and still decides every token as a verification would", async () => {
    const first = await token({ sub: "user-first" });
    expect(await outcome(first, development())).toBe("user-first");
    const tokens: string[] = [];
    for (let i = 0; i < verifiedTokens.capacity + 5; i++) tokens.push(await token({ sub: `user-${i}` }));
    for (const [i, jwt] of tokens.entries()) expect(await outcome(jwt, development())).toBe(`user-${i}`);
    expect(verifiedTokens.size).toBe(verifiedTokens.capacity);
    // Pushed out and verified afresh: each still answers as itself.
    expect(await outcome(first, development())).toBe("user-first");
    expect(await outcome(tokens[0] as string, development())).toBe("user-0");
    expect(await outcome(tokens.at(-1) as string, development())).toBe(`user-${tokens.length - 1}`);
    expect(verifiedTokens.size).toBe(verifiedTokens.capacity);
    // A token signed with a key the configuration does not trust is refused, full cache or not.
    expect(await outcome(await token({ sub: "forged" }, otherKeys.privateJwk), development())).toBe(401);
  });
});
