import { env } from "cloudflare:test";
import { DEVELOPMENT_ISSUER } from "@passport/domain";
import { importJWK, SignJWT } from "jose";

export interface DevelopmentTokenOptions {
  subject?: string;
  organisation?: string;
  role?: "owner" | "admin" | "editor" | "viewer";
}

/** Signs a development token with the key the control plane trusts in development mode. */
export async function developmentToken(options: DevelopmentTokenOptions = {}): Promise<string> {
  const jwk = JSON.parse(env.TEST_DEV_PRIVATE_JWK);
  const key = await importJWK(jwk, "ES256");
  const claims: Record<string, string> = {};
  if (options.organisation) claims.org = options.organisation;
  if (options.role) claims.role = options.role;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", kid: jwk.kid, typ: "JWT" })
    .setIssuer(DEVELOPMENT_ISSUER)
    .setAudience(env.AUTH_AUDIENCE)
    .setSubject(options.subject ?? `user-${crypto.randomUUID()}`)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(key);
}

/** A fresh organisation id, so tests never share state. */
export function freshOrganisation(): string {
  return `org_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
}
