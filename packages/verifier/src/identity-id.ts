/**
 * Local classification of a candidate identity id, so a damaged id is reported as `malformed_id`
 * without a network round trip (and even while the resolver is unreachable). The format is the
 * service's (docs/identity-id.md): `psp_` + 25 lowercase Crockford base32 characters + a Luhn
 * mod 32 check character. This package is published on its own and must not pull the private
 * domain package, so the check lives here; a test keeps it in agreement with `@passport/domain`.
 */
const PREFIX = "psp_";
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const LENGTH = 30;
const SHAPE = /^psp_[0-9a-hjkmnp-tv-z]{26}$/;

/** Why a candidate is not a valid identity id. */
export type IdentityIdDefect = "prefix" | "length" | "alphabet" | "case" | "check_character";

function checkCharacter(body: string): string {
  const n = ALPHABET.length;
  let sum = 0;
  for (let i = body.length - 1, double = true; i >= 0; i--, double = !double) {
    const addend = (double ? 2 : 1) * ALPHABET.indexOf(body.charAt(i));
    sum += Math.floor(addend / n) + (addend % n);
  }
  return ALPHABET.charAt((n - (sum % n)) % n);
}

/**
 * What is wrong with a candidate identity id, or `undefined` when it is well-formed (which says
 * nothing about whether it was ever issued).
 * @example
 * identityIdDefect("psp_123"); // "length"
 */
export function identityIdDefect(candidate: string): IdentityIdDefect | undefined {
  if (SHAPE.test(candidate)) {
    return checkCharacter(candidate.slice(PREFIX.length, -1)) === candidate.slice(-1) ? undefined : "check_character";
  }
  const lower = candidate.toLowerCase();
  if (!lower.startsWith(PREFIX)) return "prefix";
  if (candidate.length !== LENGTH) return "length";
  if (SHAPE.test(lower)) return "case";
  return "alphabet";
}

const DEFECTS: Record<IdentityIdDefect, string> = {
  prefix: `identity ids start with "${PREFIX}"`,
  length: `identity ids are exactly ${LENGTH} characters long; this one may be truncated or have extra characters`,
  alphabet: "identity ids use only the digits and lowercase letters other than i, l, o and u",
  case: "identity ids are lowercase",
  check_character: "the check character does not match; a character was probably mistyped or two were swapped",
};

/**
 * A sentence for a person fixing a copied id.
 * @example
 * describeIdentityIdDefect("case"); // "identity ids are lowercase"
 */
export function describeIdentityIdDefect(defect: IdentityIdDefect): string {
  return DEFECTS[defect];
}
