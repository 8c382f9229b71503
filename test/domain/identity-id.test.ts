import {
  IDENTITY_ID_ALPHABET,
  IDENTITY_ID_LENGTH,
  identityIdDefect,
  isIdentityId,
  mintIdentityId,
} from "@passport/domain";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const mintedId = fc.constant(null).map(() => mintIdentityId());
const bodyPosition = fc.integer({ min: 4, max: IDENTITY_ID_LENGTH - 1 });

describe("identity ids", () => {
  it("mints well-formed, distinct ids of the documented shape", () => {
    const ids = new Set(Array.from({ length: 2000 }, mintIdentityId));
    expect(ids.size).toBe(2000);
    for (const id of ids) {
      expect(id).toMatch(/^psp_[0-9a-hjkmnp-tv-z]{26}$/);
      expect(isIdentityId(id)).toBe(true);
    }
  });

  it("catches every single mistyped character", () => {
    fc.assert(
      fc.property(mintedId, bodyPosition, fc.integer({ min: 1, max: 31 }), (id, position, shift) => {
        const original = IDENTITY_ID_ALPHABET.indexOf(id.charAt(position));
        const replacement = IDENTITY_ID_ALPHABET.charAt((original + shift) % 32);
        const typo = id.slice(0, position) + replacement + id.slice(position + 1);
        expect(identityIdDefect(typo)).toBe("check_character");
      }),
      { numRuns: 3000 },
    );
  });

  it("tells truncation, wrong case, foreign characters and a wrong prefix apart", () => {
    const id = mintIdentityId();
    expect(identityIdDefect(id.slice(0, -1))).toBe("length");
    expect(identityIdDefect(`${id}x`)).toBe("length");
    expect(identityIdDefect(`${id.slice(0, 10)}A${id.slice(11)}`)).toBe("case");
    expect(identityIdDefect(`PSP_${id.slice(4)}`)).toBe("case");
    expect(identityIdDefect(`${id.slice(0, 10)}u${id.slice(11)}`)).toBe("alphabet");
    expect(identityIdDefect(`pp_x${id.slice(4)}`)).toBe("prefix");
    expect(identityIdDefect("")).toBe("prefix");
  });

  it("catches most swaps of neighbouring characters", () => {
    let caught = 0;
    let swaps = 0;
    for (let n = 0; n < 500; n++) {
      const id = mintIdentityId();
      for (let i = 4; i < IDENTITY_ID_LENGTH - 1; i++) {
        if (id[i] === id[i + 1]) continue;
        swaps++;
        const swapped = id.slice(0, i) + id.charAt(i + 1) + id.charAt(i) + id.slice(i + 2);
        if (!isIdentityId(swapped)) caught++;
      }
    }
    expect(caught / swaps).toBeGreaterThan(0.99);
  });
});
