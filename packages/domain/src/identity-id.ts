/**
 * Identity ids: `psp_` followed by 25 random characters and one check character, all from the
 * lowercase Crockford base32 alphabet. 125 random bits make collisions and guessing
 * impractical; the Luhn mod 32 check character catches every single mistyped character and
 * almost every swap of two neighbours, so a resolver can tell a damaged id (400) from a
 * well-formed id that was never issued (404). See docs/identity-id.md.
 */
const IDENTITY_ID_PREFIX = "psp_";
export const IDENTITY_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const BODY_LENGTH = 25;
export const IDENTITY_ID_LENGTH = IDENTITY_ID_PREFIX.length + BODY_LENGTH + 1;
const SHAPE = /^psp_[0-9a-hjkmnp-tv-z]{26}$/;

/** Why an id is not a valid identity id; `undefined` when it is valid. */
export type IdentityIdDefect = "prefix" | "length" | "alphabet" | "case" | "check_character";

function checkCharacter(body: string): string {
  const n = IDENTITY_ID_ALPHABET.length;
  let factor = 2;
  let sum = 0;
  for (let i = body.length - 1; i >= 0; i--) {
    let addend = factor * IDENTITY_ID_ALPHABET.indexOf(body.charAt(i));
    factor = factor === 2 ? 1 : 2;
    addend = Math.floor(addend / n) + (addend % n);
    sum += addend;
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
  return IDENTITY_ID_PREFIX + body + checkCharacter(body);
}

/**
 * Explains what is wrong with a candidate identity id.
 * @example
 * identityIdDefect("psp_123"); // "length"
 */
export function identityIdDefect(candidate: string): IdentityIdDefect | undefined {
  if (SHAPE.test(candidate)) {
    const body = candidate.slice(IDENTITY_ID_PREFIX.length, -1);
    return checkCharacter(body) === candidate.slice(-1) ? undefined : "check_character";
  }
  const lower = candidate.toLowerCase();
  if (!lower.startsWith(IDENTITY_ID_PREFIX)) return "prefix";
  if (candidate.length !== IDENTITY_ID_LENGTH) return "length";
  if (SHAPE.test(lower)) return "case";
  return "alphabet";
}

/** True when `candidate` is a well-formed identity id (which says nothing about whether it exists). */
export function isIdentityId(candidate: string): boolean {
  return identityIdDefect(candidate) === undefined;
}

const DEFECT_MESSAGES: Record<IdentityIdDefect, string> = {
  prefix: `identity ids start with "${IDENTITY_ID_PREFIX}"`,
  length: `identity ids are exactly ${IDENTITY_ID_LENGTH} characters long; this one may be truncated or have extra characters`,
  alphabet: "identity ids use only the digits and lowercase letters other than i, l, o and u",
  case: "identity ids are lowercase",
  check_character: "the check character does not match; a character was probably mistyped or two were swapped",
};

export function describeIdentityIdDefect(defect: IdentityIdDefect): string {
  return DEFECT_MESSAGES[defect];
}
