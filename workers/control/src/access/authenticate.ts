import { DEVELOPMENT_ISSUER } from "@passport/domain";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import type { Principal } from "../context.ts";
import { Refusal } from "../failures.ts";
import { SERVICE_TOKEN_PREFIX, subjectRefusal } from "./subject.ts";
import { type VerifiedToken, VerifiedTokens } from "./verified-tokens.ts";

const ALGORITHMS = ["RS256", "ES256", "EdDSA"];
const CLOCK_TOLERANCE_SECONDS = 30;

export type { Principal };

type AuthEnv = Pick<Env, "ENVIRONMENT" | "AUTH_ISSUER" | "AUTH_AUDIENCE" | "AUTH_JWKS_URL"> & {
  DEV_AUTH_PUBLIC_JWK?: string;
  /**
   * Optional service binding through which the identity provider's key set is fetched (the local
   * identity-provider simulator in tests). Without it the key set is fetched from the internet.
   */
  IDENTITY_PROVIDER?: Fetcher;
};

// Module scope, so the fetched key set and its cooldown survive across requests.
const remoteKeySets = new Map<string, JWTVerifyGetKey>();

function remoteKeySet(url: string, via: Fetcher | undefined): JWTVerifyGetKey {
  let keySet = remoteKeySets.get(url);
  if (!keySet) {
    keySet = createRemoteJWKSet(new URL(url), {
      cooldownDuration: 30_000,
      cacheMaxAge: 600_000,
      ...(via ? { [customFetch]: (input: string, init: RequestInit) => via.fetch(input, init) } : {}),
    });
    remoteKeySets.set(url, keySet);
  }
  return keySet;
}

// The development key set, imported once per isolate instead of once per request.
const localKeySets = new Map<string, JWTVerifyGetKey>();

function localKeySet(jwk: string): JWTVerifyGetKey {
  let keySet = localKeySets.get(jwk);
  if (!keySet) {
    keySet = createLocalJWKSet({ keys: [JSON.parse(jwk)] });
    localKeySets.set(jwk, keySet);
  }
  return keySet;
}

function bearerToken(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  if (authorization) {
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(authorization);
    return match?.[1];
  }
  return headers.get("cf-access-jwt-assertion") ?? undefined;
}

function unauthenticated(reason: string): Refusal {
  // The reason goes to the log only: on the wire every failure looks the same.
  console.warn(JSON.stringify({ level: "warn", event: "auth_rejected", reason }));
  return new Refusal(
    "unauthenticated",
    { detail: "A valid bearer token is required." },
    { challengeRealm: "passport-dashboard" },
  );
}

/**
 * Who the caller is. A blank `sub` names nobody and is refused. Cloudflare Access issues service
 * tokens with an empty `sub` and the token's `common_name`; they act as `service-token:{common_name}`,
 * a namespace no person's subject shares (docs/auth.md).
 */
function subjectOf(payload: JWTPayload): string | undefined {
  const { sub, common_name: commonName } = payload;
  if (typeof sub === "string" && sub !== "") {
    // A person's subject never enters the service tokens' namespace.
    return subjectRefusal(sub) === undefined && !sub.startsWith(SERVICE_TOKEN_PREFIX) ? sub : undefined;
  }
  if (sub !== "" || typeof commonName !== "string" || subjectRefusal(commonName) !== undefined) return undefined;
  const subject = `${SERVICE_TOKEN_PREFIX}${commonName}`;
  return subjectRefusal(subject) === undefined ? subject : undefined;
}

function issuerOf(token: string): string | undefined {
  try {
    const { iss } = decodeJwt(token);
    return typeof iss === "string" ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** Tokens verified in this isolate (docs/auth.md, "Verified-token cache"). */
export const verifiedTokens = new VerifiedTokens<Principal>(1000, 60_000, CLOCK_TOLERANCE_SECONDS);

/** Everything that selects how a token is verified here: a cached verification holds only under the same. */
function verifyingConfiguration(env: AuthEnv): string[] {
  return [
    env.ENVIRONMENT,
    env.AUTH_ISSUER,
    env.AUTH_AUDIENCE,
    env.AUTH_JWKS_URL,
    env.ENVIRONMENT === "development" ? (env.DEV_AUTH_PUBLIC_JWK ?? "") : "",
  ];
}

/**
 * Verifies the caller's JWT (Authorization: Bearer, or Cloudflare Access's
 * Cf-Access-Jwt-Assertion) against the configured issuer, audience and JWKS, or finds it verified
 * under the same configuration in this isolate and still inside its `exp` and `nbf`.
 * @example
 * const principal = await authenticate(c.req.raw.headers, c.env);
 */
export async function authenticate(headers: Headers, env: AuthEnv): Promise<Principal> {
  const token = bearerToken(headers);
  if (!token) throw unauthenticated("missing or malformed credentials");
  const key = verifiedTokens.key(verifyingConfiguration(env), token);
  const cached = verifiedTokens.get(key);
  if (cached) return cached;
  const verified = await verify(token, env);
  verifiedTokens.set(key, verified);
  return verified.principal;
}

async function verify(token: string, env: AuthEnv): Promise<VerifiedToken<Principal>> {
  const development = env.ENVIRONMENT === "development" && issuerOf(token) === DEVELOPMENT_ISSUER;
  if (development && !env.DEV_AUTH_PUBLIC_JWK) throw unauthenticated("development key not configured");
  // A token that names another issuer (or none) is refused before any key is fetched: looking its
  // keys up could only end in the same refusal, and a stranger's token never makes this call out.
  if (!development && issuerOf(token) !== env.AUTH_ISSUER) throw unauthenticated("token from another issuer");
  const keys = development
    ? localKeySet(env.DEV_AUTH_PUBLIC_JWK as string)
    : remoteKeySet(env.AUTH_JWKS_URL, env.IDENTITY_PROVIDER);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      algorithms: ALGORITHMS,
      issuer: development ? DEVELOPMENT_ISSUER : env.AUTH_ISSUER,
      audience: env.AUTH_AUDIENCE,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ["sub", "exp"],
    }));
  } catch (error) {
    throw unauthenticated(error instanceof Error ? `${error.name}: ${error.message}` : "verification failed");
  }
  const subject = subjectOf(payload);
  if (!subject) throw unauthenticated("token names no subject");
  const org = payload.org;
  const role = payload.role;
  // jose required `exp` and checked both as numbers.
  const bounds = { exp: payload.exp as number, ...(payload.nbf !== undefined ? { nbf: payload.nbf } : {}) };
  if (development && typeof org === "string" && typeof role === "string") {
    const developmentMembership = Object.freeze({ organisationId: org, role });
    return { principal: Object.freeze({ subject, developmentMembership }), ...bounds };
  }
  // Frozen: one principal now answers every request that presents the same token.
  return { principal: Object.freeze({ subject }), ...bounds };
}
