/**
 * C2SP tlog-cosignature v1 (Ed25519, key type 0x04): the timestamped cosignatures witnesses add
 * to a checkpoint. A witness verifier key is `<name>+<key hash hex>+<base64(0x04 || public key)>`;
 * its signature line is `— <name> <base64(key hash || uint64 timestamp || signature)>`, the
 * signature covering `cosignature/v1\ntime <timestamp>\n` followed by the checkpoint text. A
 * witness may also sign as a plain signed-note key (type 0x01, note.ts); {@link parseWitnessKey}
 * accepts both.
 */
import { type NoteVerifierKey, parseVerifierKey } from "./note.ts";

const ED25519 = 0x01;
const COSIGNATURE_V1 = 0x04;
const SIGNATURE_PREFIX = "\u2014 ";

export interface CosignatureKey {
  name: string;
  keyHash: number;
  publicKey: CryptoKey;
}

export type WitnessKey = { kind: "note"; key: NoteVerifierKey } | { kind: "cosignature"; key: CosignatureKey };

function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

async function keyHash(name: string, typedKey: Uint8Array): Promise<number> {
  const nameBytes = new TextEncoder().encode(`${name}\n`);
  const input = new Uint8Array(nameBytes.length + typedKey.length);
  input.set(nameBytes);
  input.set(typedKey, nameBytes.length);
  return new DataView(await crypto.subtle.digest("SHA-256", input)).getUint32(0);
}

/** A witness verifier key of either type; throws when it is neither, or its hash does not match. */
export async function parseWitnessKey(text: string): Promise<WitnessKey> {
  const [name, hashHex, keyBase64] = /^([^+]+)\+([0-9a-f]{8})\+(.+)$/s.exec(text)?.slice(1) ?? [];
  const typed = keyBase64 ? fromBase64(keyBase64) : undefined;
  if (typed?.[0] === ED25519) return { kind: "note", key: await parseVerifierKey(text) };
  if (!name || /[\s+]/.test(name) || !hashHex || typed?.length !== 33 || typed[0] !== COSIGNATURE_V1) {
    throw new Error("witness key is not <name>+<hash>+<Ed25519 or cosignature/v1 key>");
  }
  const hash = await keyHash(name, typed);
  if (hash !== Number.parseInt(hashHex, 16)) throw new Error("witness key hash does not match its name and key");
  const publicKey = await crypto.subtle.importKey("raw", typed.slice(1), { name: "Ed25519" }, false, ["verify"]);
  return { kind: "cosignature", key: { name, keyHash: hash, publicKey } };
}

export type CosignatureCheck =
  | { ok: true; cosigners: { name: string; timestamp: number }[] }
  | { ok: false; reason: "malformed" | "bad_signature" };

/**
 * The cosignature/v1 lines of a signed note by the given keys. A line under a known key that does
 * not verify makes the note bad, as in note.ts; lines by other keys are ignored.
 */
export async function verifyCosignatures(note: string, keys: readonly CosignatureKey[]): Promise<CosignatureCheck> {
  const split = note.lastIndexOf("\n\n");
  if (split < 0 || !note.endsWith("\n")) return { ok: false, reason: "malformed" };
  const text = note.slice(0, split + 1);
  const cosigners: { name: string; timestamp: number }[] = [];
  for (const line of note.slice(split + 2, -1).split("\n")) {
    if (!line.startsWith(SIGNATURE_PREFIX)) return { ok: false, reason: "malformed" };
    const [name, encoded] = line.slice(SIGNATURE_PREFIX.length).split(" ");
    const blob = encoded ? fromBase64(encoded) : undefined;
    if (!name || !blob || blob.length < 4) return { ok: false, reason: "malformed" };
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const key = keys.find((candidate) => candidate.name === name && candidate.keyHash === view.getUint32(0));
    if (!key) continue;
    if (blob.length !== 4 + 8 + 64) return { ok: false, reason: "bad_signature" };
    const timestamp = view.getBigUint64(4);
    if (timestamp >= 2n ** 63n) return { ok: false, reason: "bad_signature" };
    const message = new TextEncoder().encode(`cosignature/v1\ntime ${timestamp}\n${text}`);
    if (!(await crypto.subtle.verify({ name: "Ed25519" }, key.publicKey, blob.slice(12), message))) {
      return { ok: false, reason: "bad_signature" };
    }
    if (!cosigners.some((c) => c.name === name)) cosigners.push({ name, timestamp: Number(timestamp) });
  }
  return { ok: true, cosigners };
}
