/**
 * Recognises values that look like credentials, so they are refused before they reach evidence,
 * bindings or the public record (spec 2.3 rule 4, 5.5). It errs on the side of refusing.
 */
const CREDENTIAL_PATTERNS: readonly (readonly [kind: string, pattern: RegExp])[] = [
  ["private key", /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ["certificate", /-----BEGIN CERTIFICATE-----/],
  ["JSON Web Token", /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/],
  ["AWS access key id", /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/],
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

/**
 * Names the kind of credential `value` appears to contain, or `undefined`.
 * @example
 * credentialKind("https://api.example.com/?api_key=abc123def"); // "secret parameter"
 */
export function credentialKind(value: string): string | undefined {
  for (const [kind, pattern] of CREDENTIAL_PATTERNS) if (pattern.test(value)) return kind;
  return undefined;
}
