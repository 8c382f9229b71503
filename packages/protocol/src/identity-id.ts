/**
 * Identity ids (docs/identity-id.md): `psp_` followed by 25 random characters and one check
 * character, all from the lowercase Crockford base32 alphabet. 125 random bits make collisions and
 * guessing impractical; the Luhn mod 32 check character catches every single mistyped character
 * and almost every swap of two neighbours, so a damaged id (a resolver's 400, the verifier's
 * `malformed_id`, without a round trip) is told apart from a well-formed id never issued (404).
 */
const PREFIX = "psp_";
export const IDENTITY_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const BODY_LENGTH = 25;
export const IDENTITY_ID_LENGTH = PREFIX.length + BODY_LENGTH + 1;
const SHAPE = /^psp_[0-9a-hjkmnp-tv-z]{26}$/;

/** Why a candidate is not a valid identity id. */
export type IdentityIdDefect = "prefix" | "length" | "alphabet" | "case" | "check_character";

function checkCharacter(body: string): string {
  const n = IDENTITY_ID_ALPHABET.length;
  let sum = 0;
  for (let i = body.length - 1, double = true; i >= 0; i--, double = !double) {
    const addend = (double ? 2 : 1) * IDENTITY_ID_ALPHABET.indexOf(body.charAt(i));
    sum += Math.floor(addend / n) + (addend % n);
  }
  return IDENTITY_ID_ALPHABET.charAt((n - (sum % n)) % n);
}

/**
 * Mints a new identity id from the platform's cryptographic random source.
 * @example
 * const id = mintIdentityId(); // "psp_3k9v..."
 */
export function mintIdentityId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(BODY_LENGTH));
  let body = "";
  // 256 is a multiple of 32, so masking keeps every character equally likely.
  for (const byte of bytes) body += IDENTITY_ID_ALPHABET.charAt(byte & 31);
  return PREFIX + body + checkCharacter(body);
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
  if (candidate.length !== IDENTITY_ID_LENGTH) return "length";
  if (SHAPE.test(lower)) return "case";
  return "alphabet";
}

/** True when `candidate` is a well-formed identity id (which says nothing about whether it exists). */
export function isIdentityId(candidate: string): boolean {
  return identityIdDefect(candidate) === undefined;
}

const DEFECTS: Record<IdentityIdDefect, string> = {
  prefix: `identity ids start with "${PREFIX}"`,
  length: `identity ids are exactly ${IDENTITY_ID_LENGTH} characters long; this one may be truncated or have extra characters`,
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
