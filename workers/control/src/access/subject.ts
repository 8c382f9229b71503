// Who a member is: the `sub` of their token, or `service-token:{common_name}` for a Cloudflare Access
// service token (docs/auth.md). A subject is stored in memberships and histories and shown on the
// Dashboard, so it is held to one rule wherever it comes from: a token or an admin adding a member.

/** The namespace of service tokens' subjects; no person's `sub` may start with it. */
export const SERVICE_TOKEN_PREFIX = "service-token:";
const MAX_SUBJECT_LENGTH = 255;

/**
 * Why `subject` cannot name a member, or undefined when it can: blank, surrounding white space,
 * longer than 255 characters, or any control, format (zero-width, bidirectional), private-use,
 * unassigned or line-separator character.
 * @example
 * subjectRefusal("auth0|5f1c"); // undefined
 * subjectRefusal("alice\u202E"); // "contains U+202E, a control, format or invisible character"
 */
export function subjectRefusal(subject: string): string | undefined {
  if (subject.trim() === "") return "is blank";
  if (subject !== subject.trim()) return "begins or ends with white space";
  if (subject.length > MAX_SUBJECT_LENGTH) return `is longer than ${MAX_SUBJECT_LENGTH} characters`;
  const unsafe = /[\p{C}\p{Zl}\p{Zp}]/u.exec(subject)?.[0];
  if (unsafe !== undefined) {
    const code = (unsafe.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
    return `contains U+${code}, a control, format or invisible character`;
  }
  return undefined;
}
