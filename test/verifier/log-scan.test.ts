// The newest-version scan compares each entry's first bytes with the passport's tag and identity
// lines before decoding it (packages/protocol/src/log/entry.ts): that must select exactly the
// entries that decode to the passport, so the scan can never skip a newer version.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeEntry, encodeEntry, entryPrefix, startsWith } from "../../packages/protocol/src/log/entry.ts";

const line = fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).filter((s) => !/[\r\n]/.test(s));

describe("the scan's entry prefix", () => {
  it("matches an entry exactly when it decodes to that passport", () => {
    fc.assert(
      fc.property(line, line, fc.integer({ min: 1, max: 1e9 }), line, line, (id, other, version, digest, at) => {
        const entry = encodeEntry({ identityId: other, recordVersion: version, digest, publishedAt: at });
        expect(startsWith(entry, entryPrefix(id))).toBe(decodeEntry(entry)?.identityId === id);
        expect(startsWith(entry, entryPrefix(other))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("tells apart ids where one begins the other", () => {
    const entry = encodeEntry({ identityId: "psp_abc", recordVersion: 2, digest: "sha-256:x", publishedAt: "t" });
    expect(startsWith(entry, entryPrefix("psp_ab"))).toBe(false);
    expect(startsWith(entry, entryPrefix("psp_abcd"))).toBe(false);
    expect(startsWith(entry, entryPrefix("psp_abc"))).toBe(true);
  });
});
