import { canonicalDigest } from "@passport/protocol";
import type { PassportRecord, UnsealedRecord } from "./record.ts";

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
