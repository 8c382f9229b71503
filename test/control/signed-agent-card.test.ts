// A manifest binding whose A2A agent card is signed by the passport's own proven keys says so in
// the record (docs/bindings.md, "Signed agent cards"): `card_signed_by` lists the thumbprints of
// the proven keys whose JWS signatures over the card verified at the binding's check.
import { canonicalBytes } from "@passport/domain";
import { calculateJwkThumbprint, exportJWK, FlattenedSign, generateKeyPair, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { type Body, Caller, resolve } from "../support/api.ts";
import { json, KEY_DIRECTORY_PATH, keyDirectory, serve, uniqueHost } from "../support/hosts.ts";

async function keyPair() {
  const { publicKey, privateKey } = await generateKeyPair("Ed25519", { extractable: true });
  const publicJwk: JWK = await exportJWK(publicKey);
  return { publicJwk, privateKey, thumbprint: await calculateJwkThumbprint(publicJwk, "sha256") };
}
type Key = Awaited<ReturnType<typeof keyPair>>;

/** The card with a JWS by `key` over its canonical JSON (A2A section 8.4), the payload detached. */
async function signed(card: Record<string, unknown>, key: Key) {
  const { signatures = [], ...unsigned } = card as { signatures?: unknown[] };
  const jws = await new FlattenedSign(canonicalBytes(unsigned))
    .setProtectedHeader({ alg: "EdDSA", kid: key.thumbprint })
    .sign(key.privateKey);
  return { ...card, signatures: [...signatures, { protected: jws.protected, signature: jws.signature }] };
}

describe("a manifest binding's signed agent card", () => {
  it("is on record as signed by the proven keys that signed it, and by nothing else", async () => {
    const caller = await Caller.create("editor");
    const keysHost = uniqueHost("bot");
    const cardHost = uniqueHost("agents");
    const card = `https://${cardHost}/agent-card.json`;
    const created = await caller.createPassport({
      family: "agent",
      display_name: "Signed card agent",
      bindings: [
        { class: "signing_keys", value: `https://${keysHost}${KEY_DIRECTORY_PATH}` },
        { class: "manifest", value: card },
      ],
    });
    const id = created.identity_id as string;
    const bindingOf = (cls: string) => (created.bindings as Body[]).find((b) => b.class === cls) as Body;
    const [keysBinding, cardBinding] = [bindingOf("signing_keys"), bindingOf("manifest")];
    const verify = (binding: Body) => caller.json("POST", `/v1/passports/${id}/bindings/${binding.id}/verify`);
    const [proven, stranger] = [await keyPair(), await keyPair()];
    await serve(keysHost, { [KEY_DIRECTORY_PATH]: keyDirectory({ passport: id, keys: [proven.publicJwk] }) });
    expect((await verify(keysBinding)).result).toBe("verified");

    const manifestOf = async () => (await resolve(id)).record.bindings.find((b: Body) => b.class === "manifest");
    const CARD = { name: "Signed card agent", url: "https://agent.example/a2a", passport: id };

    // Signed by the proven key (beside another party's signature, which is left aside).
    await serve(cardHost, { "/agent-card.json": json(await signed(await signed(CARD, stranger), proven)) });
    expect((await verify(cardBinding)).result).toBe("verified");
    expect(await manifestOf()).toMatchObject({
      verification: { state: "verified" },
      card_signed_by: [proven.thumbprint],
    });

    // Unsigned, or signed by a key the passport does not prove: verified (it names the passport), not signed.
    for (const served of [CARD, await signed(CARD, stranger)]) {
      await serve(cardHost, { "/agent-card.json": json(served) });
      expect((await verify(cardBinding)).result).toBe("verified");
      const manifest = await manifestOf();
      expect(manifest.verification.state).toBe("verified");
      expect(manifest.card_signed_by).toBeUndefined();
    }

    // Changed after the proven key signed it: the signature no longer verifies, so it is not signed.
    const tampered = { ...(await signed(CARD, proven)), url: "https://attacker.example/a2a" };
    await serve(cardHost, { "/agent-card.json": json(tampered) });
    expect((await verify(cardBinding)).result).toBe("verified");
    expect((await manifestOf()).card_signed_by).toBeUndefined();
  });
});
