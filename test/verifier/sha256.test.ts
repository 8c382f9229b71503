// The verifier hashes with its own synchronous SHA-256 where WebCrypto's asynchronous digest cost
// most of a log check (packages/protocol/src/sha256.ts). It must give WebCrypto's bytes for any
// input, however split into parts, and the Merkle hashes built on it must equal the asynchronous ones.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, canonicalMembers, withMember } from "../../packages/protocol/src/canonical.ts";
import {
  leafHash,
  leafHashSync,
  nodeHashSync,
  rootFromLeafHashes,
  rootFromLeafHashesSync,
} from "../../packages/protocol/src/log/merkle.ts";
import { sha256 } from "../../packages/protocol/src/sha256.ts";

const hex = (bytes: ArrayBuffer | Uint8Array) =>
  [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
const webCrypto = async (bytes: Uint8Array<ArrayBuffer>) => hex(await crypto.subtle.digest("SHA-256", bytes));
const text = (s: string) => new TextEncoder().encode(s);

describe("the synchronous SHA-256", () => {
  it("gives the FIPS 180-4 example digests", () => {
    expect(hex(sha256())).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(hex(sha256(text("abc")))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hex(sha256(text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
  });

  it("equals WebCrypto for any input, at every length around the block edges, however split", async () => {
    for (let length = 0; length <= 200; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(hex(sha256(bytes)), `length ${length}`).toBe(await webCrypto(bytes));
    }
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 5 }), async (parts) => {
        const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
        let at = 0;
        for (const part of parts) {
          joined.set(part, at);
          at += part.length;
        }
        expect(hex(sha256(...parts))).toBe(await webCrypto(joined));
      }),
      { numRuns: 500 },
    );
  });

  it("gives the same Merkle leaf, node and root hashes as the asynchronous functions", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 200 }), { minLength: 1, maxLength: 40 }),
        async (entries) => {
          const leaves = await Promise.all(entries.map((e) => leafHash(e)));
          expect(entries.map((e) => hex(leafHashSync(e)))).toEqual(leaves.map(hex));
          expect(hex(rootFromLeafHashesSync(leaves))).toBe(hex(await rootFromLeafHashes(leaves)));
          if (leaves.length >= 2) {
            const [left, right] = leaves as [Uint8Array, Uint8Array];
            expect(hex(nodeHashSync(left, right))).toBe(hex(await rootFromLeafHashes([left, right])));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("a record's signed form from its digested members", () => {
  it("equals the canonical JSON of the whole object, wherever the added member sorts", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: "binary" }), fc.jsonValue()),
        fc.string({ unit: "binary" }),
        fc.jsonValue(),
        (object, name, value) => {
          const rest = JSON.parse(JSON.stringify(object)) as Record<string, unknown>;
          delete rest[name];
          const whole = JSON.parse(JSON.stringify({ ...rest, [name]: value })) as Record<string, unknown>;
          expect(withMember(canonicalMembers(rest), name, whole[name])).toBe(canonicalJson(whole));
        },
      ),
      { numRuns: 1000 },
    );
    // The record's own case: "digest" among the members a record has.
    const record = { identity_id: "psp_x", display_name: "A", family: "api", previous_digest: "sha-256:B", state: {} };
    expect(withMember(canonicalMembers(record), "digest", "sha-256:C")).toBe(
      canonicalJson({ ...record, digest: "sha-256:C" }),
    );
  });
});
