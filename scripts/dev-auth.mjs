// The development token issuer: an ES256 key pair kept in .wrangler/dev-auth/ (git-ignored, made
// on first use). The control plane trusts its public key only in its development environment.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";

export const root = dirname(dirname(fileURLToPath(import.meta.url)));
export const DEVELOPMENT_ISSUER = "urn:svc:passport:development";
export const AUDIENCE = "passport-dashboard";
export const DEMO_ORGANISATION = "org_demo";
const keyFile = join(root, ".wrangler", "dev-auth", "keys.json");

export async function developmentKeys() {
  if (existsSync(keyFile)) return JSON.parse(readFileSync(keyFile, "utf8"));
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = `dev-${Date.now().toString(36)}`;
  const keys = {
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" },
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: "ES256" },
  };
  mkdirSync(dirname(keyFile), { recursive: true });
  writeFileSync(keyFile, JSON.stringify(keys, null, 2), { mode: 0o600 });
  return keys;
}

export async function signDevelopmentToken({
  subject = "dev-owner",
  organisation = DEMO_ORGANISATION,
  role = "owner",
  ttl = "12h",
} = {}) {
  const { privateJwk } = await developmentKeys();
  return new SignJWT({ org: organisation, role })
    .setProtectedHeader({ alg: "ES256", kid: privateJwk.kid, typ: "JWT" })
    .setIssuer(DEVELOPMENT_ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime(ttl)
    .sign(await importJWK(privateJwk, "ES256"));
}
