// The development token issuer: an ES256 key pair kept in .wrangler/dev-auth/ (git-ignored, made
// on first use). The control plane trusts its public key only in its development environment.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { attestationFacts, EVIDENCE_ATTESTATION_TYPE } from "@passport/domain";
import { DEVELOPMENT_ISSUER } from "@passport/domain/development";
import { CompactSign, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import { logKeyPair, signingKeyPair } from "./dev-keys.mjs";

export const root = dirname(dirname(fileURLToPath(import.meta.url)));
const AUDIENCE = "passport-dashboard";
export const DEMO_ORGANISATION = "org_demo";
const keyDir = join(root, ".wrangler", "dev-auth");

/** A key pair (ES256 unless `alg` says otherwise) kept in `.wrangler/dev-auth/{name}.json`, made on first use. */
async function localKeyPair(name, alg = "ES256") {
  const file = join(keyDir, `${name}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  const { publicJwk, privateJwk } = await signingKeyPair(alg, `${name}-${Date.now().toString(36)}`);
  const keys = { publicJwk: JSON.parse(publicJwk), privateJwk: JSON.parse(privateJwk) };
  mkdirSync(keyDir, { recursive: true });
  writeFileSync(file, JSON.stringify(keys, null, 2), { mode: 0o600 });
  return keys;
}

/** The development token issuer's key pair. */
export const developmentKeys = () => localKeyPair("keys");

/** The local record-signing key pair (production keeps its private key in the SIGNING_KEY secret). */
export const recordSigningKeys = () => localKeyPair("record-signing");

/**
 * The local change-notification key pair, Ed25519 (docs/events.md): the control plane's
 * NOTIFICATION_SIGNING_KEY; its public half is listed in the resolver's SIGNING_JWKS.
 */
export const notificationSigningKeys = () => localKeyPair("notification-signing", "EdDSA");

/** The demo's trusted evidence source; only its key's attestation makes its evidence count. */
export const DEMO_AUDITOR = "Demo trusted auditor";

/** The demo auditor's key pair: the control plane trusts its public half (TRUSTED_EVIDENCE_ATTESTERS). */
export const demoAuditorKeys = () => localKeyPair("demo-auditor");

/** The demo agent's Web Bot Auth key directory (docs/reciprocal-trust.md), served by the hosts simulator. */
export const DEMO_KEY_DIRECTORY = "https://agents.demo.example/.well-known/http-message-signatures-directory";

/**
 * The demo agent's request-signing key (docs/reciprocal-trust.md): an Ed25519 key pair kept in
 * `.wrangler/dev-auth/demo-agent-signing.json`, made on first use. Its public half is served in the
 * demo agent's Web Bot Auth key directory (hosts simulator) and proven as the agent passport's
 * signing_keys binding; `kid` is the key's RFC 7638 thumbprint, the `keyid` its signatures name.
 */
export async function demoAgentSigningKeys() {
  const file = join(keyDir, "demo-agent-signing.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  const { publicKey, privateKey } = await generateKeyPair("Ed25519", { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk, "sha256");
  const keys = {
    publicJwk: { ...publicJwk, kid, alg: "Ed25519", use: "sig" },
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: "Ed25519" },
  };
  mkdirSync(keyDir, { recursive: true });
  writeFileSync(file, JSON.stringify(keys, null, 2), { mode: 0o600 });
  return keys;
}

/**
 * The demo auditor's attestation of one evidence item of one passport (docs/evidence-attestation.md):
 * a compact JWS over the item's facts (`attestationFacts`, the same builder the control plane checks against).
 */
export async function attestAsDemoAuditor(identityId, evidence) {
  const { privateJwk } = await demoAuditorKeys();
  const facts = attestationFacts(identityId, evidence);
  return new CompactSign(new TextEncoder().encode(JSON.stringify(facts)))
    .setProtectedHeader({ alg: "ES256", kid: privateJwk.kid, typ: EVIDENCE_ATTESTATION_TYPE })
    .sign(await importJWK(privateJwk, "ES256"));
}

/** The development environment's LOG_ORIGIN (workers/control/wrangler.toml). */
export const DEVELOPMENT_LOG_ORIGIN = "passport.localhost/log";

/**
 * The local transparency-log key (docs/transparency-log.md): the control plane's LOG_SIGNING_KEY
 * and the resolver's LOG_VERIFIER_KEY, kept in `.wrangler/dev-auth/log-signing.json`.
 */
export async function logSigningKeys() {
  const file = join(keyDir, "log-signing.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  const keys = await logKeyPair(DEVELOPMENT_LOG_ORIGIN);
  mkdirSync(keyDir, { recursive: true });
  writeFileSync(file, JSON.stringify(keys, null, 2), { mode: 0o600 });
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
