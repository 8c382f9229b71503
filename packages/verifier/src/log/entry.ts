/**
 * The canonical encoding of one log entry: a publication of one version of one passport.
 * Four fields on their own lines after a version tag, UTF-8, each line ending in "\n":
 *
 *   passport-log-entry/v1
 *   <identity id>
 *   <record version, decimal>
 *   <record digest, as published in the history>
 *   <publication time, RFC 3339 UTC>
 *
 * No field may contain a line break, so the encoding is unambiguous. The leaf hash is
 * RFC 9162's SHA-256(0x00 || encoding).
 */

export interface LogEntry {
  identityId: string;
  recordVersion: number;
  digest: string;
  publishedAt: string;
}

const TAG = "passport-log-entry/v1";

function field(value: string, name: string): string {
  if (value.length === 0 || /[\r\n]/.test(value)) throw new Error(`log entry ${name} is empty or has a line break`);
  return value;
}

export function encodeEntry(entry: LogEntry): Uint8Array {
  if (!Number.isSafeInteger(entry.recordVersion) || entry.recordVersion < 1) {
    throw new Error("log entry record version is not a positive integer");
  }
  const lines = [
    TAG,
    field(entry.identityId, "identity id"),
    String(entry.recordVersion),
    field(entry.digest, "digest"),
    field(entry.publishedAt, "publication time"),
  ];
  return new TextEncoder().encode(`${lines.join("\n")}\n`);
}

export function decodeEntry(bytes: Uint8Array): LogEntry | undefined {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
  if (!text.endsWith("\n")) return undefined;
  const [tag, identityId, version, digest, publishedAt, ...rest] = text.slice(0, -1).split("\n");
  if (tag !== TAG || rest.length > 0 || !identityId || !version || !digest || !publishedAt) return undefined;
  if (!/^[1-9][0-9]*$/.test(version) || !Number.isSafeInteger(Number(version))) return undefined;
  return { identityId, recordVersion: Number(version), digest, publishedAt };
}
