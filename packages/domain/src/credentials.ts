/**
 * Recognises values that look like credentials, so they are refused before they reach evidence,
 * bindings or the public record (spec 2.3 rule 4, 5.5). It errs on the side of refusing.
 */
const CREDENTIAL_PATTERNS: readonly (readonly [kind: string, pattern: RegExp])[] = [
  ["private key", /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ["certificate", /-----BEGIN CERTIFICATE-----/],
  ["JSON Web Token", /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/],
  ["AWS access key id", /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/],
  // The secret half of an AWS key pair, under any of the names the SDKs, the CLI and IAM give it.
  [
    "AWS secret access key",
    /(?:aws)?[_-]?secret[_-]?access[_-]?key(?:[_-]?id)?["']?\s*[=:]\s*["']?[A-Za-z0-9/+=]{30,}/i,
  ],
  ["GitHub token", /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/],
  ["Slack token", /\bxox[abposr]-[A-Za-z0-9-]{10,}/],
  ["Stripe key", /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/],
  ["Google API key", /\bAIza[0-9A-Za-z_-]{35}\b/],
  ["bearer credential", /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/i],
  ["password in URL", /[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/i],
  [
    "secret parameter",
    /(?:[?&;\s"']|^)(?:access_token|api[_-]?key|apikey|auth|client_secret|password|passwd|pwd|secret|sig|signature|token|x-amzn-marketplace-token)\s*[=:]\s*[^\s&"']{6,}/i,
  ],
];

/** Runs of standard base64 at least 64 characters long: the length of an opaque token, not of a word. */
const LONG_BASE64 = /(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{64,}={0,2}(?![A-Za-z0-9+/=])/g;

/**
 * An opaque token pasted bare, shaped like a marketplace registration token (long base64): a run
 * that carries `+` or padding, which a URL path or a name never does, or in which one piece between
 * slashes is 30 characters mixing upper case, lower case and digits, or that uses 40 or more
 * distinct characters, as random bytes do and path words and hex digests do not.
 */
function looksLikeOpaqueToken(value: string): boolean {
  for (const [run] of value.matchAll(LONG_BASE64)) {
    if (!/\d/.test(run)) continue;
    if (run.includes("+") || run.endsWith("=")) return true;
    const pieces = run.split("/");
    if (pieces.some((p) => p.length >= 30 && /[A-Z]/.test(p) && /[a-z]/.test(p) && /\d/.test(p))) return true;
    // Random bytes whose slashes happen to cut every piece short: a 128-character token uses about
    // 55 of base64's 64 characters, while words, paths and hex digests use far fewer.
    if (new Set(run).size >= 40 && /[A-Z]/.test(run) && /[a-z]/.test(run)) return true;
  }
  return false;
}

/**
 * Names the kind of credential `value` appears to contain, or `undefined`.
 * @example
 * credentialKind("https://api.example.com/?api_key=abc123def"); // "secret parameter"
 */
export function credentialKind(value: string): string | undefined {
  for (const [kind, pattern] of CREDENTIAL_PATTERNS) if (pattern.test(value)) return kind;
  return looksLikeOpaqueToken(value) ? "registration token" : undefined;
}
