// Interoperability: a call the fetch wrapper's RequestSigner signed is accepted by Cloudflare's
// `web-bot-auth` verifier when the verifier's key lookup trusts exactly the keys the Signature Agent
// Card lists (docs/signature-agent-card.md). The card names keys by thumbprint, never by their
// bytes, so the lookup reads the bytes from the directory the card names for that thumbprint and
// accepts them only when their thumbprint is the listed one.

import { PassportRecord, type SignatureAgentCard, signatureAgentCard } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { jwkToKeyID, type VerificationParams, verify } from "web-bot-auth";
import { helpers, verifierFromJWK } from "web-bot-auth/crypto";
import { RequestSigner } from "../../packages/verifier/src/fetch.ts";
import { API_URL, agentRecord, DIRECTORY, directoryHost, type Key, keyPair } from "./call-support.ts";
import { RecordServer } from "./support.ts";

const BASE = "https://resolver.example";

/** A `web-bot-auth` key lookup built from the card alone, plus the directory it names for key bytes. */
function cardKeyLookup(card: SignatureAgentCard, fetchDirectory: (url: string) => Promise<Response>) {
  return async (data: string, signature: Uint8Array, params: VerificationParams) => {
    const listed = card.passport.keys.find((k) => k.thumbprint === params.keyid);
    if (!listed) throw new Error(`keyid ${params.keyid} is not a key of the card`);
    const directory = (await (await fetchDirectory(listed.directory)).json()) as { keys: JsonWebKey[] };
    for (const jwk of directory.keys) {
      if ((await jwkToKeyID(jwk, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE)) !== listed.thumbprint) continue;
      return (await verifierFromJWK(jwk))(data, signature, params);
    }
    throw new Error(`the directory no longer serves key ${listed.thumbprint}`);
  };
}

async function setUp(proven: (key: Key, other: Key) => Key[]) {
  const key = await keyPair();
  const other = await keyPair();
  const host = directoryHost(() => [key, other]);
  const server = await RecordServer.create();
  const published = await server.publish(agentRecord(proven(key, other)));
  const card = signatureAgentCard(PassportRecord.parse(published), BASE, Date.now());
  if (!card) throw new Error("an agent record with a proven key has a card");
  const signer = (k: Key) =>
    RequestSigner.create({ privateJwk: k.privateJwk, directory: DIRECTORY, identityId: published.identity_id });
  return { key, other, card, signer, lookup: cardKeyLookup(card, host.fetch) };
}

describe("Cloudflare's web-bot-auth verifier, given the served Signature Agent Card", () => {
  it("accepts a call the fetch wrapper signed with a key the card lists", async () => {
    const t = await setUp((key) => [key]);
    expect(t.card.passport.keys.map((k) => k.thumbprint)).toEqual([t.key.thumbprint]);
    const request = await (await t.signer(t.key)).sign(new Request(API_URL, { method: "POST" }));
    await expect(verify(request, t.lookup)).resolves.toBeUndefined();
  });

  it("refuses a call signed by a key the directory serves but the card does not list", async () => {
    const t = await setUp((key) => [key]);
    const request = await (await t.signer(t.other)).sign(new Request(API_URL, { method: "POST" }));
    await expect(verify(request, t.lookup)).rejects.toThrow("is not a key of the card");
  });

  it("refuses a listed key's signature once the request is altered", async () => {
    const t = await setUp((key) => [key]);
    const signed = await (await t.signer(t.key)).sign(new Request(API_URL, { method: "POST" }));
    const altered = new Request(API_URL.replace("/orders", "/refunds"), signed);
    await expect(verify(altered, t.lookup)).rejects.toThrow();
  });
});
