import canonicalize from "canonicalize";
import { sha256Base64url } from "./encoding.ts";
import type { PassportRecord, UnsealedRecord } from "./record.ts";

/** SHA-256 over the RFC 8785 canonical form of `value`, as `sha-256:<base64url>`. */
export async function canonicalDigest(value: unknown): Promise<string> {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError("value has no canonical JSON form");
  return `sha-256:${await sha256Base64url(canonical)}`;
}

/**
 * Adds the content digest to a record. The digest covers every other member, so a re-checker
 * recomputes it by removing `digest` and hashing the canonical JSON of what remains.
 * @example
 * const record = await sealRecord(unsealed);
 * record.digest; // "sha-256:..."
 */
export async function sealRecord(record: UnsealedRecord): Promise<PassportRecord> {
  return { ...record, digest: await canonicalDigest(record) };
}

/** True when `record.digest` matches its content. */
export async function digestMatches(record: PassportRecord): Promise<boolean> {
  const { digest, ...rest } = record;
  return (await canonicalDigest(rest)) === digest;
}
