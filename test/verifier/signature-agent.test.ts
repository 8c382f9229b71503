// Signature-Agent as the Web Bot Auth working group writes it (draft-ietf-webbotauth-httpsig-protocol):
// an RFC 8941 dictionary whose members name agents by https URL strings. The legacy bare string
// of the earlier drafts is still read. The signer writes the dictionary unless asked for the
// legacy form; the provider accepts both and refuses a header that is neither.

import { describe, expect, it } from "vitest";
import { RequestSigner, webBotAuth } from "../../packages/verifier/src/call/web-bot-auth.ts";
import { API_URL, call, DIRECTORY, keyPair, policy, setUp } from "./call-support.ts";

const WINDOW = { windowSeconds: 60, now: Date.now() };

/** A request signed as an agent would, then with its Signature-Agent header replaced by `value`. */
async function withSignatureAgent(value: string): Promise<Request> {
  const key = await keyPair();
  const signer = await RequestSigner.create({ privateJwk: key.privateJwk, directory: DIRECTORY, identityId: "psp_x" });
  const signed = await signer.sign(new Request(API_URL, { method: "POST" }), WINDOW.now);
  const headers = new Headers(signed.headers);
  headers.set("signature-agent", value);
  return new Request(signed, { headers });
}

describe("Signature-Agent", () => {
  it("the signer writes the dictionary form by default and the legacy string when asked", async () => {
    const key = await keyPair();
    const options = { privateJwk: key.privateJwk, directory: DIRECTORY, identityId: "psp_x" };
    const current = await (await RequestSigner.create(options)).sign(new Request(API_URL));
    expect(current.headers.get("signature-agent")).toBe(`agent="${DIRECTORY}"`);
    const legacy = await (await RequestSigner.create({ ...options, signatureAgentForm: "legacy" })).sign(
      new Request(API_URL),
    );
    expect(legacy.headers.get("signature-agent")).toBe(`"${DIRECTORY}"`);
  });

  it("a call signed in either form is accepted by the provider's check", async () => {
    const t = await setUp();
    for (const signatureAgentForm of ["dictionary", "legacy"] as const) {
      const signer = await RequestSigner.create({
        privateJwk: t.key.privateJwk,
        directory: DIRECTORY,
        identityId: t.agent.identity_id,
        signatureAgentForm,
      });
      const request = await signer.sign(new Request(API_URL, { method: "POST" }));
      const result = await t.verifier.decideCall(call(policy(), t.api.identity_id, request));
      expect(result.decision, signatureAgentForm).toBe("allow");
      expect(result.sides.caller?.signature?.keyid).toBe(t.key.thumbprint);
    }
  });

  it("well-formed values in either form pass screening: several members, parameters, escapes, spacing", async () => {
    const screen = webBotAuth().screen;
    for (const value of [
      `"${DIRECTORY}"`,
      `  "${DIRECTORY}" `,
      `agent="${DIRECTORY}"`,
      `agent="${DIRECTORY}";type=directory`,
      `a1="https://one.example/keys.json";type=jwks_uri, a2="https://two.example/card";type=cimd;v=2;ok=?1;flag`,
      `agent="https://agent.example/a\\"b"`,
      `agent="https://old.example/keys",agent="${DIRECTORY}"`,
    ]) {
      expect(screen?.(await withSignatureAgent(value), WINDOW), value).toBeUndefined();
    }
  });

  it("a value that is neither form is refused before anything is looked up", async () => {
    const screen = webBotAuth().screen;
    for (const [value, why] of [
      ["", "it is empty"],
      [DIRECTORY, "member https has no value"],
      ['"https://agent.example/keys', "the legacy form is one string"],
      [`"${DIRECTORY}", "https://two.example"`, "the legacy form is one string"],
      ['"http://agent.example/keys"', "is not an https URL"],
      ["agent", "member agent has no value"],
      ["agent=https", "member agent is not a string"],
      ['agent=("https://agent.example/keys")', "member agent is not a string"],
      ['agent="https://agent.example/\\n"', "member agent is not a string"],
      ['agent="https://agent.example/keys";=x', "malformed parameters"],
      ['agent="ftp://agent.example/keys"', "is not an https URL"],
      ['Agent="https://agent.example/keys"', "a member name is expected"],
      [`agent="${DIRECTORY}",`, "it ends with a comma"],
      [`agent="${DIRECTORY}" other="${DIRECTORY}"`, '"," is expected'],
    ] as const) {
      const refusal = screen?.(await withSignatureAgent(value), WINDOW);
      expect(refusal, value).toMatchObject({ ok: false, problem: "signature_invalid" });
      expect(refusal?.detail, value).toContain("The Signature-Agent header is not an RFC 8941 dictionary");
      expect(refusal?.detail, value).toContain(why);
    }
  });
});
