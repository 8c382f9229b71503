import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { type Body, Caller, resolve } from "../support/api.ts";
import { dashboard } from "../support/control-fixtures.ts";
import { KEY_DIRECTORY_PATH, keyDirectory, serve, uniqueHost } from "../support/hosts.ts";
import { recheckAt } from "../support/rechecks.ts";

// Caller keys as proven bindings (docs/reciprocal-trust.md): a signing_keys binding's key directory
// names the passport; the service records the public keys it saw (with their thumbprints), follows
// rotation on re-checks (a removed key is kept as withdrawn), and never proves (or keeps) a
// directory holding private key material.

async function keyPair(kid: string): Promise<{ publicJwk: JWK; privateJwk: JWK; thumbprint: string }> {
  const { publicKey, privateKey } = await generateKeyPair("Ed25519", { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ed25519" };
  const privateJwk = { ...(await exportJWK(privateKey)), kid };
  return { publicJwk, privateJwk, thumbprint: await calculateJwkThumbprint(publicJwk, "sha256") };
}

async function agentWithKeys(caller: Caller) {
  const host = uniqueHost("bot");
  const url = `https://${host}${KEY_DIRECTORY_PATH}`;
  const passport = await caller.createPassport({
    family: "agent",
    display_name: "Signing agent",
    bindings: [{ class: "signing_keys", value: url }],
  });
  return { host, url, id: passport.identity_id as string, bindingId: passport.bindings[0].id as string };
}

function verify(caller: Caller, id: string, bindingId: string): Promise<Body> {
  return caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
}

function bindingOf(passport: Body, bindingId: string): Body {
  return passport.bindings.find((b: Body) => b.id === bindingId);
}

describe("signing_keys bindings", () => {
  it("are proven when the directory names the passport; the thumbprints are published with observed evidence", async () => {
    const caller = await Caller.create("editor");
    const { host, url, id, bindingId } = await agentWithKeys(caller);
    const first = await verify(caller, id, bindingId);
    expect(first.result).toBe("not_proven");
    expect(first.instructions.key_directory).toMatchObject({
      url,
      content_type: "application/http-message-signatures-directory+json",
      document: { passport: id },
    });

    const one = await keyPair("k1");
    const two = await keyPair("k2");
    await serve(host, { [KEY_DIRECTORY_PATH]: keyDirectory({ passport: id, keys: [one.publicJwk, two.publicJwk] }) });
    const proven = await verify(caller, id, bindingId);
    expect(proven.result).toBe("verified");
    const binding = bindingOf(proven.passport, bindingId);
    expect(binding.verification).toMatchObject({ state: "verified", method: "document_names_id" });
    // Each key with its public members exactly as far as its thumbprint covers them: no kid, alg or use.
    const publicMembers = (k: { publicJwk: JWK }) => ({ kty: "OKP", crv: "Ed25519", x: k.publicJwk.x });
    const keys = [
      { thumbprint: one.thumbprint, kid: "k1", alg: "ed25519", jwk: publicMembers(one) },
      { thumbprint: two.thumbprint, kid: "k2", alg: "ed25519", jwk: publicMembers(two) },
    ];
    expect(binding.keys).toEqual(keys);
    const evidence = proven.passport.evidence.find((e: Body) => e.id === binding.verification.evidence);
    expect(evidence).toMatchObject({ basis: "observed", claim: "binding.signing_keys_control", scope: url });

    const { record } = await resolve(id);
    expect(record.bindings[0]).toMatchObject({ class: "signing_keys", value: url, keys });
    // The public keys are published (a verifier needs nothing else); nothing private ever is.
    expect(JSON.stringify(record)).not.toContain(one.privateJwk.d as string);
    expect(JSON.stringify(record)).not.toContain(two.privateJwk.d as string);
    // The Dashboard shows the keys seen under the binding.
    const page = await dashboard(caller, `/dashboard/passports/${id}`);
    const html = await page.text();
    expect(html).toContain(`key <code>${one.thumbprint}</code> (kid k1) · ed25519`);
    expect(html).toContain("Signing key directory");
    const history = await caller.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.at(-1)).toMatchObject({
      kind: "binding.verified",
      detail: { keys: [one.thumbprint, two.thumbprint] },
    });
  });

  it("a per-key passport member proves only that key; any JWK Set URL and media type work", async () => {
    const caller = await Caller.create("admin");
    const host = uniqueHost("jwks");
    const url = `https://${host}/keys.json`;
    const passport = await caller.createPassport({
      family: "api",
      display_name: "Keyed API",
      bindings: [{ class: "signing_keys", value: url }],
    });
    const id = passport.identity_id as string;
    const mine = await keyPair("mine");
    const theirs = await keyPair("theirs");
    await serve(host, {
      "/keys.json": {
        content_type: "application/json",
        body: {
          keys: [
            { ...mine.publicJwk, passport: id },
            { ...theirs.publicJwk, passport: "psp_other" },
          ],
        },
      },
    });
    const proven = await verify(caller, id, passport.bindings[0].id);
    expect(proven.result).toBe("verified");
    expect(proven.passport.bindings[0].keys.map((k: Body) => k.thumbprint)).toEqual([mine.thumbprint]);

    // A kid that is not a plain identifier (here a bidirectional override) is left out, the key kept.
    await serve(host, {
      "/keys.json": {
        content_type: "application/json",
        body: { passport: id, keys: [{ ...mine.publicJwk, kid: "a\u202eb" }] },
      },
    });
    const again = await verify(caller, id, passport.bindings[0].id);
    expect(again.passport.bindings[0].keys).toEqual([
      { thumbprint: mine.thumbprint, alg: "ed25519", jwk: { kty: "OKP", crv: "Ed25519", x: mine.publicJwk.x } },
    ]);
  });

  it("are refused when the directory does not name the passport, holds a private key, or holds too many keys", async () => {
    const caller = await Caller.create("editor");
    const { host, url, id, bindingId } = await agentWithKeys(caller);
    const key = await keyPair("k1");

    await serve(host, { [KEY_DIRECTORY_PATH]: keyDirectory({ keys: [key.publicJwk] }) });
    let outcome = await verify(caller, id, bindingId);
    expect(outcome.result).toBe("not_proven");
    expect(outcome.reason).toBe(
      `${url} does not name ${id} or its resolver URL (a "passport" member of the key set or of a key)`,
    );

    // A private key in the directory: refused whole, and nothing of it is stored or shown.
    await serve(host, {
      [KEY_DIRECTORY_PATH]: keyDirectory({ passport: id, keys: [key.publicJwk, { ...key.privateJwk, kid: "leak" }] }),
    });
    outcome = await verify(caller, id, bindingId);
    expect(outcome.result).toBe("not_proven");
    expect(outcome.reason).toContain("key 1 of");
    expect(outcome.reason).toContain('carries private key material ("d")');
    const shown = JSON.stringify(await caller.json("GET", `/v1/passports/${id}`));
    expect(shown).not.toContain(key.privateJwk.d as string);
    expect(JSON.stringify(await caller.json("GET", `/v1/passports/${id}/history`))).not.toContain(
      key.privateJwk.d as string,
    );

    const many = await Promise.all(Array.from({ length: 11 }, (_, i) => keyPair(`k${i}`)));
    await serve(host, { [KEY_DIRECTORY_PATH]: keyDirectory({ passport: id, keys: many.map((k) => k.publicJwk) }) });
    outcome = await verify(caller, id, bindingId);
    expect(outcome.reason).toBe(`${url} holds 11 keys; at most 10 are checked`);

    await serve(host, {
      [KEY_DIRECTORY_PATH]: keyDirectory({ passport: id, keys: [{ ...key.publicJwk, padding: "x".repeat(3000) }] }),
    });
    expect((await verify(caller, id, bindingId)).reason).toContain("is larger than 2048 bytes");

    await serve(host, { [KEY_DIRECTORY_PATH]: keyDirectory({ passport: id, keys: [{ kty: "OKP", crv: "Ed25519" }] }) });
    expect((await verify(caller, id, bindingId)).reason).toContain("lacks the members of its key type");
    expect(bindingOf(await caller.json("GET", `/v1/passports/${id}`), bindingId).verification).toEqual({
      state: "claimed",
    });
  });

  it("re-checks follow key rotation; an unreachable directory keeps the proof; one that stops naming the passport lapses it", async () => {
    const caller = await Caller.create("editor");
    const { host, id, bindingId } = await agentWithKeys(caller);
    const old = await keyPair("2026-01");
    await serve(host, { [KEY_DIRECTORY_PATH]: keyDirectory({ passport: id, keys: [old.publicJwk] }) });
    const proven = bindingOf((await verify(caller, id, bindingId)).passport, bindingId);
    expect(proven.keys.map((k: Body) => k.thumbprint)).toEqual([old.thumbprint]);

    // Rotation: the new key is added, then the old one removed; each re-check publishes what it saw.
    const next = await keyPair("2026-02");
    await serve(host, {
      [KEY_DIRECTORY_PATH]: keyDirectory({ passport: id, keys: [old.publicJwk, next.publicJwk] }),
    });
    expect((await recheckAt(new Date(Date.parse(proven.next_check_at)))).get(bindingId)).toBe("verified");
    let { record } = await resolve(id);
    expect(record.bindings[0].keys.map((k: Body) => k.thumbprint)).toEqual([old.thumbprint, next.thumbprint]);

    await serve(host, { [KEY_DIRECTORY_PATH]: keyDirectory({ passport: id, keys: [next.publicJwk] }) });
    let view = bindingOf(await caller.json("GET", `/v1/passports/${id}`), bindingId);
    expect((await recheckAt(new Date(Date.parse(view.next_check_at)))).get(bindingId)).toBe("verified");
    ({ record } = await resolve(id));
    expect(record.bindings[0].keys).toEqual([
      {
        thumbprint: next.thumbprint,
        kid: "2026-02",
        alg: "ed25519",
        jwk: { kty: "OKP", crv: "Ed25519", x: next.publicJwk.x },
      },
    ]);
    // The removed key is on record as withdrawn, so a verifier can tell it from one never proven.
    expect(record.bindings[0].withdrawn_keys).toEqual([
      { thumbprint: old.thumbprint, withdrawn_at: expect.any(String) },
    ]);

    // The host fails: the proof and its keys stay.
    await serve(host, { [KEY_DIRECTORY_PATH]: { status: 503 } });
    view = bindingOf(await caller.json("GET", `/v1/passports/${id}`), bindingId);
    expect((await recheckAt(new Date(Date.parse(view.next_check_at)))).get(bindingId)).toBe("unreachable");
    view = bindingOf(await caller.json("GET", `/v1/passports/${id}`), bindingId);
    expect(view.verification.state).toBe("verified");
    expect(view.keys.map((k: Body) => k.thumbprint)).toEqual([next.thumbprint]);

    // The directory no longer names the passport: lapsed, and its keys are no longer published.
    await serve(host, { [KEY_DIRECTORY_PATH]: keyDirectory({ passport: "psp_someone_else", keys: [next.publicJwk] }) });
    expect((await recheckAt(new Date(Date.parse(view.next_check_at)))).get(bindingId)).toBe("mismatch");
    ({ record } = await resolve(id));
    expect(record.bindings[0].verification.state).toBe("lapsed");
    expect(record.bindings[0].keys).toBeUndefined();
    expect(record.bindings[0].withdrawn_keys).toBeUndefined();
    expect(bindingOf(await caller.json("GET", `/v1/passports/${id}`), bindingId).keys).toBeNull();
  });

  it("refuses a signing_keys value that is not an https URL", async () => {
    const caller = await Caller.create("editor");
    const response = await caller.request("POST", "/v1/passports", {
      family: "agent",
      organisation_id: caller.organisation,
      display_name: "Plain http keys",
      bindings: [{ class: "signing_keys", value: "http://keys.example.com/jwks.json" }],
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("an https URL of a key directory");
  });
});
