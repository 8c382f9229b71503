// Interoperability: a call the fetch wrapper's RequestSigner signed is accepted by Cloudflare's
// `web-bot-auth` verifier given only the Signature Agent Card the resolver serves
// (docs/signature-agent-card.md). End to end: the control plane proves the agent's key directory
// (played by the hosts simulator), publishes, and the resolver serves the card; the verifier's
// key lookup reads the card's `jwks` and nothing else: no record, no key directory.

import { Validator } from "@cfworker/json-schema";
import { signatureAgentCardJsonSchema, webBotAuthSignatureAgentCardJsonSchema } from "@passport/domain";
import { beforeAll, describe, expect, it } from "vitest";
import { jwkToKeyID, type VerificationParams, verify } from "web-bot-auth";
import { helpers, verifierFromJWK } from "web-bot-auth/crypto";
import { RequestSigner } from "../../packages/verifier/src/fetch.ts";
import { KEY_DIRECTORY_PATH, keyDirectory, serve, uniqueHost } from "../support/hosts.ts";
import { API_URL, type Key, keyPair } from "./call-support.ts";
import { Owner, RESOLVER, resolverFetch } from "./support.ts";

interface ServedCard {
  client_id?: string;
  jwks?: { keys: (JsonWebKey & { kid: string })[] };
  passport: { identity_id: string; keys: { thumbprint: string }[] };
}

/** A `web-bot-auth` key lookup built from the served card alone: the key whose thumbprint is the keyid. */
function cardKeyLookup(card: ServedCard) {
  return async (data: string, signature: Uint8Array, params: VerificationParams) => {
    for (const jwk of card.jwks?.keys ?? []) {
      // The card names each key by its thumbprint; the lookup recomputes it rather than trust the name.
      if ((await jwkToKeyID(jwk, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE)) !== params.keyid) continue;
      return (await verifierFromJWK(jwk))(data, signature, params);
    }
    throw new Error(`keyid ${params.keyid} is not a key of the card`);
  };
}

let t: {
  id: string;
  directory: string;
  key: Key;
  other: Key;
  card: ServedCard;
  signer: (key: Key) => Promise<RequestSigner>;
};

beforeAll(async () => {
  const owner = await Owner.create();
  const host = uniqueHost("bot");
  const directory = `https://${host}${KEY_DIRECTORY_PATH}`;
  const created = await owner.caller.createPassport({
    family: "agent",
    display_name: "Interop agent",
    bindings: [{ class: "signing_keys", value: directory }],
  });
  const id = created.identity_id as string;
  const [key, other] = [await keyPair(), await keyPair()];
  // The directory serves both keys but names the passport on one only: only that one is proven.
  await serve(host, {
    [KEY_DIRECTORY_PATH]: keyDirectory({ keys: [{ ...key.publicJwk, passport: id }, other.publicJwk] }),
  });
  const proof = await owner.caller.json("POST", `/v1/passports/${id}/bindings/${created.bindings[0].id}/verify`);
  expect(proof.result).toBe("verified");
  const response = await resolverFetch(`${RESOLVER}/api/p/${id}/signature-agent-card.json`);
  expect(response.status).toBe(200);
  const card = (await response.json()) as ServedCard;
  const signer = (k: Key) => RequestSigner.create({ privateJwk: k.privateJwk, directory, identityId: id });
  t = { id, directory, key, other, card, signer };
}, 60_000);

describe("Cloudflare's web-bot-auth verifier, given only the served Signature Agent Card", () => {
  it("is a card the Web Bot Auth registry draft accepts, carrying the proven public key", () => {
    const drafts = new Validator(webBotAuthSignatureAgentCardJsonSchema() as never, "2020-12", false);
    expect(drafts.validate(t.card).errors).toEqual([]);
    const ours = new Validator(signatureAgentCardJsonSchema() as never, "2020-12", false);
    expect(ours.validate(t.card).errors).toEqual([]);
    // The test resolver is on http, so the card has no client_id (the draft's is https only).
    expect(t.card.client_id).toBeUndefined();
    const { kty, crv, x } = t.key.publicJwk;
    expect(t.card.jwks?.keys).toEqual([{ kty, crv, x, kid: t.key.thumbprint, use: "sig" }]);
    expect(t.card.passport.keys.map((k) => k.thumbprint)).toEqual([t.key.thumbprint]);
    expect(JSON.stringify(t.card)).not.toContain(t.key.privateJwk.d as string);
  });

  it("accepts a call the fetch wrapper signed with a key the card lists", async () => {
    const request = await (await t.signer(t.key)).sign(new Request(API_URL, { method: "POST" }));
    await expect(verify(request, cardKeyLookup(t.card))).resolves.toBeUndefined();
  });

  it("refuses a call signed by a key the directory serves but the card does not list", async () => {
    const request = await (await t.signer(t.other)).sign(new Request(API_URL, { method: "POST" }));
    await expect(verify(request, cardKeyLookup(t.card))).rejects.toThrow("is not a key of the card");
  });

  it("refuses a listed key's signature once the request is altered", async () => {
    const signed = await (await t.signer(t.key)).sign(new Request(API_URL, { method: "POST" }));
    const altered = new Request(API_URL.replace("/orders", "/refunds"), signed);
    await expect(verify(altered, cardKeyLookup(t.card))).rejects.toThrow();
  });
});
