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

/**
 * The bytes every encoded entry of `identityId` starts with (its tag and identity lines): an entry
 * decodes to that identity exactly when it starts with them and decodes at all, so a scan for one
 * passport compares bytes and decodes only its own entries.
 */
export function entryPrefix(identityId: string): Uint8Array {
  return new TextEncoder().encode(`${TAG}\n${identityId}\n`);
}

/** Whether `bytes` starts with `prefix`. */
export function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/** An entry bundle (C2SP tlog-tiles): each entry prefixed by its length as a big-endian uint16. */
export function encodeBundle(entries: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const entry of entries) {
    if (entry.length > 0xffff) throw new Error("log entry is longer than 65535 bytes");
    length += 2 + entry.length;
  }
  const bundle = new Uint8Array(length);
  const view = new DataView(bundle.buffer);
  let at = 0;
  for (const entry of entries) {
    view.setUint16(at, entry.length);
    bundle.set(entry, at + 2);
    at += 2 + entry.length;
  }
  return bundle;
}

/** The entries of a bundle, or undefined when a length prefix runs past the end. */
export function decodeBundle(bundle: Uint8Array): Uint8Array[] | undefined {
  const view = new DataView(bundle.buffer, bundle.byteOffset, bundle.byteLength);
  const entries: Uint8Array[] = [];
  let at = 0;
  while (at < bundle.length) {
    if (at + 2 > bundle.length) return undefined;
    const length = view.getUint16(at);
    if (at + 2 + length > bundle.length) return undefined;
    entries.push(bundle.slice(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return entries;
}
