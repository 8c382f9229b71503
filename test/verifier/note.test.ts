import { describe, expect, it } from "vitest";
import {
  formatCheckpoint,
  formatVerifierKey,
  meetsWitnessQuorum,
  parseCheckpoint,
  parseVerifierKey,
  signatureLine,
  verifyNote,
} from "../../packages/protocol/src/log/note.ts";
import { SIGNED_NOTE, VERIFIER_KEY } from "./vectors/signed-note.ts";

async function logKey(name: string): Promise<{ verifierKey: string; privateKey: CryptoKey }> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const raw = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  return { verifierKey: await formatVerifierKey(name, raw), privateKey: pair.privateKey };
}

describe("signed notes (C2SP signed-note)", () => {
  it("accepts the reference note under the reference key and refuses it altered", async () => {
    const key = await parseVerifierKey(VERIFIER_KEY);
    expect(await verifyNote(SIGNED_NOTE, [key])).toMatchObject({ ok: true, signers: ["PeterNeumann"] });
    const altered = SIGNED_NOTE.replace("the answer", "an answer");
    expect(await verifyNote(altered, [key])).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("refuses a verifier key whose hash does not match, and a note signed by no known key", async () => {
    await expect(parseVerifierKey(VERIFIER_KEY.replace("+c74f20a3+", "+c74f20a4+"))).rejects.toThrow();
    const other = await parseVerifierKey((await logKey("other.example")).verifierKey);
    expect(await verifyNote(SIGNED_NOTE, [other])).toEqual({ ok: false, reason: "unsigned_by_known_key" });
    expect(await verifyNote("no signature block\n", [other])).toEqual({ ok: false, reason: "malformed" });
  });

  it("reads verifier keys whose base64 contains a plus sign", async () => {
    for (let attempt = 0; attempt < 64; attempt++) {
      const { verifierKey } = await logKey("passport.example/log");
      if (verifierKey.split("+").length > 3) {
        expect((await parseVerifierKey(verifierKey)).name).toBe("passport.example/log");
        return;
      }
    }
    throw new Error("no generated key had a plus sign in 64 attempts");
  });

  it("round-trips a checkpoint signed by the log and cosigned by a witness", async () => {
    const log = await logKey("passport.example/log");
    const witness = await logKey("witness.example");
    const body = formatCheckpoint({
      origin: "passport.example/log",
      size: 1234,
      rootHash: new Uint8Array(32).fill(7),
      extensions: [],
    });
    const note =
      `${body}\n` +
      (await signatureLine(body, log.verifierKey, log.privateKey)) +
      (await signatureLine(body, witness.verifierKey, witness.privateKey));
    const keys = [await parseVerifierKey(log.verifierKey), await parseVerifierKey(witness.verifierKey)];
    const check = await verifyNote(note, keys);
    expect(check).toMatchObject({ ok: true, signers: ["passport.example/log", "witness.example"] });
    if (!check.ok) return;
    const checkpoint = parseCheckpoint(check.text);
    expect(checkpoint?.origin).toBe("passport.example/log");
    expect(checkpoint?.size).toBe(1234);
    expect(checkpoint?.rootHash).toEqual(new Uint8Array(32).fill(7));
    const witnesses = ["witness.example", "witness-two.example"];
    expect(meetsWitnessQuorum(check.signers, "passport.example/log", witnesses, 1)).toBe(true);
    expect(meetsWitnessQuorum(check.signers, "passport.example/log", witnesses, 2)).toBe(false);
    // Witness cosignatures without the log's own signature are not a checkpoint of this log.
    expect(meetsWitnessQuorum(["witness.example"], "passport.example/log", witnesses, 1)).toBe(false);
    // A different size under the same signature is a forgery.
    expect(await verifyNote(note.replace("\n1234\n", "\n1235\n"), keys)).toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });

  it("refuses malformed checkpoint bodies", () => {
    expect(parseCheckpoint("origin\n012\nAAAA\n")).toBeUndefined();
    expect(parseCheckpoint("origin\n12\nAAAA\n")).toBeUndefined();
    expect(parseCheckpoint("origin\n12\n")).toBeUndefined();
  });
});
