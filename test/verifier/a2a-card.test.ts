// Signed A2A agent cards (docs/verifier.md, "Signed A2A agent cards"): a card's JWS signatures,
// detached over the RFC 8785 canonical JSON of the card without `signatures`, count only by a key
// the agent passport proves through a verified, fresh signing_keys binding.

import { describe, expect, it } from "vitest";
import { agentCardPayload, verifyAgentCard } from "../../packages/verifier/src/a2a-card.ts";
import { base64urlEncode, type PassportRecordView, parseRecord } from "../../packages/verifier/src/index.ts";
import { agentRecord, DIRECTORY, directoryHost, type Key, keyPair } from "./call-support.ts";

const CARD = {
  protocolVersion: "0.3.0",
  name: "Booking agent",
  description: "Books rooms.",
  url: "https://agent.example/a2a",
  version: "1.0.0",
  capabilities: { streaming: false },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["application/json"],
  skills: [{ id: "book", name: "Book a room", description: "Books a room.", tags: ["travel"] }],
};

function record(proven: Key[], overrides: Record<string, unknown> = {}): PassportRecordView {
  const parsed = parseRecord(agentRecord(proven, overrides));
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

/** Signs `card` as A2A section 8.4 describes: a JWS with a detached payload, the card's canonical JSON. */
async function sign(card: Record<string, unknown>, key: Key, header: Record<string, unknown>) {
  const protectedHeader = base64urlEncode(new TextEncoder().encode(JSON.stringify({ alg: "EdDSA", ...header })));
  const { alg: _alg, key_ops: _ops, ext: _ext, ...material } = key.privateJwk;
  const privateKey = await crypto.subtle.importKey("jwk", material, { name: "Ed25519" }, false, ["sign"]);
  const input = new TextEncoder().encode(`${protectedHeader}.${agentCardPayload(card)}`);
  const signature = base64urlEncode(await crypto.subtle.sign("Ed25519", privateKey, input));
  return {
    ...card,
    signatures: [...((card.signatures as unknown[]) ?? []), { protected: protectedHeader, signature }],
  };
}

describe("verifyAgentCard", () => {
  it("accepts a card signed by a proven key, named by thumbprint (key read from the directory) or embedded", async () => {
    const key = await keyPair();
    const host = directoryHost(() => [key]);
    const byKid = await sign(CARD, key, { kid: key.thumbprint });
    const check = await verifyAgentCard(byKid, record([key]), { fetch: host.fetch });
    expect(check).toEqual({
      ok: true,
      identityId: expect.stringMatching(/^psp_/),
      signatures: [{ index: 0, thumbprint: key.thumbprint, alg: "EdDSA", directory: DIRECTORY }],
    });
    expect(host.reads()).toBe(1);

    // The member order of the card as served does not matter: the signature covers its canonical form.
    const reordered = Object.fromEntries(Object.entries(byKid).reverse());
    expect((await verifyAgentCard(reordered, record([key]), { fetch: host.fetch })).ok).toBe(true);

    const { d: _d, ...publicJwk } = key.privateJwk;
    const embedded = await sign(CARD, key, { jwk: publicJwk });
    const noFetch = async (): Promise<Response> => {
      throw new Error("an embedded key needs no directory read");
    };
    expect((await verifyAgentCard(embedded, record([key]), { fetch: noFetch })).ok).toBe(true);
  });

  it("takes a proven key from the record when the record carries it, reading no directory", async () => {
    const key = await keyPair();
    const signed = await sign(CARD, key, { kid: key.thumbprint });
    const { kty, crv, x } = key.publicJwk;
    const carried = agentRecord([key]);
    const keys = [{ thumbprint: key.thumbprint, alg: "EdDSA", jwk: { kty, crv, x } }];
    const parsed = parseRecord({ ...carried, bindings: [{ ...carried.bindings[0], keys }] });
    if (!parsed.ok) throw new Error(parsed.problem);
    const noFetch = async (): Promise<Response> => {
      throw new Error("the record carries the key");
    };
    expect((await verifyAgentCard(signed, parsed.value, { fetch: noFetch })).ok).toBe(true);
    // A jwk in the record that is not the thumbprint's key is not used: the directory is read.
    const other = await keyPair();
    const wrong = [{ ...keys[0], jwk: { kty, crv, x: other.publicJwk.x } }];
    const mislabelled = parseRecord({ ...carried, bindings: [{ ...carried.bindings[0], keys: wrong }] });
    if (!mislabelled.ok) throw new Error(mislabelled.problem);
    const host = directoryHost(() => [key]);
    expect((await verifyAgentCard(signed, mislabelled.value, { fetch: host.fetch })).ok).toBe(true);
    expect(host.reads()).toBe(1);
  });

  it("refuses a card changed after it was signed", async () => {
    const key = await keyPair();
    const signed = await sign(CARD, key, { kid: key.thumbprint });
    const tampered = { ...signed, url: "https://attacker.example/a2a" };
    const check = await verifyAgentCard(tampered, record([key]), { fetch: directoryHost(() => [key]).fetch });
    expect(check).toMatchObject({ ok: false, problem: "signature_invalid" });
    expect(check.ok || check.detail).toContain(`by proven key ${key.thumbprint} does not verify`);
  });

  it("refuses a card signed only by a key the passport does not prove, even one its directory serves", async () => {
    const proven = await keyPair();
    const other = await keyPair();
    const host = directoryHost(() => [proven, other]);
    const { d: _d, ...otherPublic } = other.privateJwk;
    for (const header of [{ kid: other.thumbprint }, { jwk: otherPublic }]) {
      const check = await verifyAgentCard(await sign(CARD, other, header), record([proven]), { fetch: host.fetch });
      expect(check).toMatchObject({ ok: false, problem: "key_not_proven" });
    }
    // Another party's signature beside the passport's own is left aside.
    const both = await sign(await sign(CARD, other, { kid: other.thumbprint }), proven, { kid: proven.thumbprint });
    const check = await verifyAgentCard(both, record([proven]), { fetch: host.fetch });
    expect(check.ok && check.signatures.map((s) => s.index)).toEqual([1]);
  });

  it("refuses a card signed by a key withdrawn from the passport's directory since it was signed", async () => {
    const withdrawn = await keyPair();
    const current = await keyPair();
    const signed = await sign(CARD, withdrawn, { kid: withdrawn.thumbprint });
    // Proven while it was in the directory; the re-check after the rotation proves only the new key.
    expect(
      (await verifyAgentCard(signed, record([withdrawn]), { fetch: directoryHost(() => [withdrawn]).fetch })).ok,
    ).toBe(true);
    const check = await verifyAgentCard(signed, record([current]), { fetch: directoryHost(() => [current]).fetch });
    expect(check).toMatchObject({ ok: false, problem: "key_not_proven" });
  });

  it("reads a manifest binding's card_signed_by from the record", () => {
    const base = agentRecord([]);
    const manifest = {
      class: "manifest",
      value: "https://agent.example/agent-card.json",
      bound_at: new Date().toISOString(),
      verification: base.bindings[0]?.verification,
      card_signed_by: ["A".repeat(43)],
    };
    const parsed = parseRecord({ ...base, bindings: [...base.bindings, manifest] });
    expect(parsed.ok && parsed.value.bindings[1]?.card_signed_by).toEqual(["A".repeat(43)]);
    const broken = parseRecord({ ...base, bindings: [{ ...manifest, card_signed_by: [1] }] });
    expect(broken).toMatchObject({ ok: false, problem: expect.stringContaining("card_signed_by") });
  });

  it("says key_withdrawn for a key the record lists as withdrawn, rather than key_not_proven", async () => {
    const withdrawn = await keyPair();
    const current = await keyPair();
    const signed = await sign(CARD, withdrawn, { kid: withdrawn.thumbprint });
    const rotated = agentRecord([current]);
    const withdrawnAt = new Date(Date.now() - 60_000).toISOString();
    const binding = {
      ...rotated.bindings[0],
      withdrawn_keys: [{ thumbprint: withdrawn.thumbprint, withdrawn_at: withdrawnAt }],
    };
    const parsed = parseRecord({ ...rotated, bindings: [binding] });
    if (!parsed.ok) throw new Error(parsed.problem);
    const check = await verifyAgentCard(signed, parsed.value, { fetch: directoryHost(() => [current]).fetch });
    expect(check).toMatchObject({ ok: false, problem: "key_withdrawn" });
    expect(check.ok || check.detail).toContain(withdrawnAt);
    // An embedded key is recognised as withdrawn by its thumbprint too.
    const { d: _d, ...withdrawnPublic } = withdrawn.privateJwk;
    const embedded = await sign(CARD, withdrawn, { jwk: withdrawnPublic });
    expect(await verifyAgentCard(embedded, parsed.value)).toMatchObject({ ok: false, problem: "key_withdrawn" });
  });

  it("refuses every card while the passport proves no key: claimed, lapsed or past fresh_until", async () => {
    const key = await keyPair();
    const signed = await sign(CARD, key, { kid: key.thumbprint });
    const binding = (verification: Record<string, unknown>) => ({
      bindings: [{ class: "signing_keys", value: DIRECTORY, bound_at: new Date().toISOString(), verification }],
    });
    const past = new Date(Date.now() - 3600_000).toISOString();
    for (const verification of [
      { state: "claimed" },
      { state: "lapsed", reason: "the directory no longer names the passport" },
      { state: "verified", method: "document_names_id", verified_at: past, fresh_until: past, evidence: "evd_1" },
    ]) {
      const check = await verifyAgentCard(signed, record([key], binding(verification)));
      expect(check, JSON.stringify(verification)).toMatchObject({ ok: false, problem: "passport_keys_unproven" });
    }
  });

  it("tells an unsigned card, a malformed one and an unreadable key apart", async () => {
    const key = await keyPair();
    expect(await verifyAgentCard(CARD, record([key]))).toMatchObject({ ok: false, problem: "card_unsigned" });
    expect(await verifyAgentCard({ ...CARD, signatures: [{ protected: 1 }] }, record([key]))).toMatchObject({
      ok: false,
      problem: "card_malformed",
    });
    expect(await verifyAgentCard([CARD], record([key]))).toMatchObject({ ok: false, problem: "card_malformed" });
    const signed = await sign(CARD, key, { kid: key.thumbprint });
    const down = async () => new Response("unavailable", { status: 503 });
    expect(await verifyAgentCard(signed, record([key]), { fetch: down })).toMatchObject({
      ok: false,
      problem: "key_unavailable",
    });
  });
});
