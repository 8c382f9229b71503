// A record's signature is verified once per record version and key set (packages/verifier/src/
// verified-memo.ts): the memo may save the ES256 verification, never change an answer.
import { canonicalBytes } from "@passport/domain";
import { CompactSign, importJWK } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KeyLookup } from "../../packages/protocol/src/jws.ts";
import {
  canonicalDigest,
  checkRecordProof,
  type JwkSet,
  KeyRing,
  parseRecord,
} from "../../packages/verifier/src/index.ts";
import { signingKeyPair } from "../../scripts/dev-keys.mjs";
import { contractRecord } from "./support.ts";

async function signer() {
  const { publicJwk, privateJwk } = await signingKeyPair("ES256", "memo-key");
  const jwks: JwkSet = { keys: [JSON.parse(publicJwk)] };
  const key = await importJWK(JSON.parse(privateJwk), "ES256");
  /** The record with its digest, and its detached signature as the resolver serves it. */
  const sign = async (fields: Record<string, unknown>) => {
    const { digest: _, ...content } = fields;
    const record = { ...content, digest: await canonicalDigest(content) };
    const jws = await new CompactSign(canonicalBytes(record))
      .setProtectedHeader({ alg: "ES256", kid: "memo-key", typ: "passport+jws" })
      .sign(key);
    const [header, , signature] = jws.split(".");
    return { record, signature: `${header}..${signature}` };
  };
  return { jwks, sign };
}

function check(record: Record<string, unknown>, signature: string, keys: KeyLookup) {
  const parsed = parseRecord(record);
  if (!parsed.ok) throw new Error(parsed.problem);
  return checkRecordProof(record, parsed.value, signature, keys as KeyRing);
}

/**
 * A key set whose keys can change under the memo (a KeyRing never does): it answers from `ring`
 * until `use` gives it another ring, or none (every key withdrawn).
 */
function changingKeys(ring: KeyRing | undefined) {
  let current = ring;
  return {
    key: (kid: string) => current?.key(kid),
    get kids() {
      return current?.kids ?? [];
    },
    use(next: KeyRing | undefined) {
      current = next;
    },
  };
}

/** A signed record checked once (and so remembered) under a key set that can change afterwards. */
async function verifiedUnderChangingKeys() {
  const { jwks, sign } = await signer();
  const { record, signature } = await sign(contractRecord());
  const keys = changingKeys(new KeyRing(jwks));
  expect(await check(record, signature, keys)).toMatchObject({ ok: true });
  return { record, signature, keys };
}

afterEach(() => vi.restoreAllMocks());

describe("record signatures verified once per version and key set", () => {
  it("a second check of the same record and signature verifies without a second ES256 verification", async () => {
    const { jwks, sign } = await signer();
    const { record, signature } = await sign(contractRecord());
    const ring = new KeyRing(jwks);
    const verify = vi.spyOn(crypto.subtle, "verify");
    expect(await check(record, signature, ring)).toMatchObject({ ok: true, proof: { signature: "verified" } });
    expect(await check(structuredClone(record), signature, ring)).toMatchObject({
      ok: true,
      proof: { signature: "verified", kid: "memo-key" },
    });
    expect(verify).toHaveBeenCalledTimes(1);
    // Another key set, even with the same keys, verifies for itself.
    expect(await check(record, signature, new KeyRing(jwks))).toMatchObject({ ok: true });
    expect(verify).toHaveBeenCalledTimes(2);
  });

  it("after a hit, an altered record (digest recomputed) or another record's signature still fails", async () => {
    const { jwks, sign } = await signer();
    const first = await sign(contractRecord());
    const second = await sign(contractRecord({ display_name: "Another API" }));
    const ring = new KeyRing(jwks);
    expect(await check(first.record, first.signature, ring)).toMatchObject({ ok: true });
    expect(await check(second.record, second.signature, ring)).toMatchObject({ ok: true });

    const { digest: _, ...content } = { ...first.record, display_name: "Altered" };
    const altered = { ...content, digest: await canonicalDigest(content) };
    expect(await check(altered, first.signature, ring)).toMatchObject({
      ok: false,
      finding: { outcome: "signature_invalid", kind: "mismatch" },
    });
    expect(await check(first.record, second.signature, ring)).toMatchObject({
      ok: false,
      finding: { outcome: "signature_invalid", kind: "mismatch" },
    });
  });

  it("a key set that now maps the kid to other key material gets no hit: the signature is checked again", async () => {
    const { record, signature, keys } = await verifiedUnderChangingKeys();
    // The same kid, another key pair's public key.
    keys.use(new KeyRing({ keys: [JSON.parse((await signingKeyPair("ES256", "memo-key")).publicJwk)] }));
    expect(await check(record, signature, keys)).toMatchObject({
      ok: false,
      finding: { outcome: "signature_invalid", kind: "mismatch" },
    });
  });

  it("a key set that no longer has the signing key gets no hit: unknown_key", async () => {
    const { record, signature, keys } = await verifiedUnderChangingKeys();
    keys.use(undefined);
    expect(await check(record, signature, keys)).toMatchObject({
      ok: false,
      finding: { outcome: "unknown_key", reason: expect.stringContaining("(none)") },
    });
  });
});
