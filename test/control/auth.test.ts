import { env } from "cloudflare:workers";
import { base64url, importJWK, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { signingKeyPair } from "../../scripts/dev-keys.mjs";
import { app } from "../../workers/control/src/app.ts";

const ISSUER = "https://idp.test/";
const AUDIENCE = "passport-dashboard";

/** The control plane as configured for production, trusting the simulated identity provider. */
function production(headers: Record<string, string>) {
  return app.request(
    "http://control.test/v1/me",
    { headers },
    {
      ...env,
      ENVIRONMENT: "production",
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
      AUTH_JWKS_URL: "https://idp.test/.well-known/jwks.json",
      IDENTITY_PROVIDER: env.TEST_IDENTITY_PROVIDER,
    },
  );
}

async function providerToken(
  claims: { iss?: string; aud?: string; sub?: string; exp?: number; nbf?: number; common_name?: string } = {},
  privateJwk = env.TEST_IDP_PRIVATE_JWK,
) {
  const jwk = JSON.parse(privateJwk);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims.common_name === undefined ? {} : { common_name: claims.common_name })
    .setProtectedHeader({ alg: "RS256", kid: jwk.kid, typ: "JWT" })
    .setIssuer(claims.iss ?? ISSUER)
    .setAudience(claims.aud ?? AUDIENCE)
    .setSubject(claims.sub ?? "alice@example.com")
    .setIssuedAt(now)
    .setNotBefore(claims.nbf ?? now)
    .setExpirationTime(claims.exp ?? now + 600)
    .sign(await importJWK(jwk, "RS256"));
}

const UNAUTHENTICATED = {
  type: "urn:svc:passport:problem:unauthenticated",
  title: "Authentication required",
  status: 401,
  detail: "A valid bearer token is required.",
};

describe("control-plane authentication (production configuration)", () => {
  it("accepts a valid token from the configured issuer, as a bearer token or an Access assertion", async () => {
    const token = await providerToken();
    const bearer = await production({ authorization: `Bearer ${token}` });
    expect(bearer.status).toBe(200);
    expect(await bearer.json()).toMatchObject({ subject: "alice@example.com" });
    const access = await production({ "cf-access-jwt-assertion": token });
    expect(access.status).toBe(200);
  });

  it("refuses a token whose subject is empty, blank or holds control characters (401), and creates nothing", async () => {
    for (const sub of [
      "",
      "   ",
      "alice\u0000",
      "x".repeat(256),
      "alice\u200B",
      "alice\u202Eeve",
      "alice\u2066",
      " alice",
      // A person's subject never takes a service token's namespace.
      "service-token:ci-pipeline.access",
    ]) {
      const response = await production({ authorization: `Bearer ${await providerToken({ sub })}` });
      expect(response.status, JSON.stringify(sub)).toBe(401);
      expect(await response.json()).toEqual(UNAUTHENTICATED);
    }
  });

  it("maps a Cloudflare Access service token (empty sub, common_name) to its own service-token: subject", async () => {
    const token = await providerToken({ sub: "", common_name: "ci-pipeline.access" });
    const response = await production({ "cf-access-jwt-assertion": token });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ subject: "service-token:ci-pipeline.access" });
  });

  it("refuses a service token whose common_name is not a valid subject, with its prefix too long", async () => {
    for (const commonName of ["ci\u202E", "ci\u0000", "   ", "x".repeat(250)]) {
      const token = await providerToken({ sub: "", common_name: commonName });
      const response = await production({ "cf-access-jwt-assertion": token });
      expect(response.status, JSON.stringify(commonName)).toBe(401);
    }
  });

  const now = () => Math.floor(Date.now() / 1000);
  const rejected: [string, () => Promise<Record<string, string>>][] = [
    ["no credentials", async () => ({})],
    ["a malformed Authorization header", async () => ({ authorization: "Token abc" })],
    ["garbage in place of a JWT", async () => ({ authorization: "Bearer not.a.jwt" })],
    ["an expired token", async () => ({ authorization: `Bearer ${await providerToken({ exp: now() - 120 })}` })],
    ["a token not yet valid", async () => ({ authorization: `Bearer ${await providerToken({ nbf: now() + 600 })}` })],
    ["a wrong issuer", async () => ({ authorization: `Bearer ${await providerToken({ iss: "https://evil.test/" })}` })],
    ["a wrong audience", async () => ({ authorization: `Bearer ${await providerToken({ aud: "other-app" })}` })],
    [
      "an unknown kid",
      async () => ({
        authorization: `Bearer ${await providerToken({}, (await signingKeyPair("RS256")).privateJwk)}`,
      }),
    ],
    [
      "a tampered payload",
      async () => {
        const [header, , signature] = (await providerToken()).split(".");
        const forged = base64url.encode(
          JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: "mallory", exp: now() + 600 }),
        );
        return { authorization: `Bearer ${header}.${forged}.${signature}` };
      },
    ],
    [
      "alg: none",
      async () => {
        const header = base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }));
        const payload = base64url.encode(
          JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: "mallory", exp: now() + 600 }),
        );
        return { authorization: `Bearer ${header}.${payload}.` };
      },
    ],
    [
      "HS256 signed with the provider's public key",
      async () => {
        const publicJwk = JSON.parse(env.TEST_IDP_PUBLIC_JWK);
        const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
        const token = await new SignJWT({})
          .setProtectedHeader({ alg: "HS256", kid: publicJwk.kid })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setSubject("mallory")
          .setExpirationTime("10m")
          .sign(secret);
        return { authorization: `Bearer ${token}` };
      },
    ],
  ];

  for (const [name, headers] of rejected) {
    it(`rejects ${name} with the same 401`, async () => {
      const response = await production(await headers());
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
      expect(await response.json()).toEqual(UNAUTHENTICATED);
    });
  }
});
