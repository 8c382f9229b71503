/**
 * C2SP signed-note verification (Ed25519 keys only) and C2SP tlog-checkpoint parsing.
 * A verifier key is written `<name>+<key hash hex>+<base64(0x01 || public key)>`; a signature
 * line is `— <name> <base64(key hash || signature)>`, the key hash being the first four bytes of
 * SHA-256(name || "\n" || 0x01 || public key).
 */

const ED25519 = 0x01;
const SIGNATURE_PREFIX = "\u2014 ";

export interface NoteVerifierKey {
  name: string;
  keyHash: number;
  publicKey: CryptoKey;
}

export interface Checkpoint {
  origin: string;
  size: number;
  rootHash: Uint8Array;
  extensions: string[];
}

export type NoteCheck =
  | { ok: true; text: string; signers: string[] }
  | { ok: false; reason: "malformed" | "unsigned_by_known_key" | "bad_signature" };

function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

async function keyHash(name: string, key: Uint8Array): Promise<number> {
  const nameBytes = new TextEncoder().encode(`${name}\n`);
  const input = new Uint8Array(nameBytes.length + key.length);
  input.set(nameBytes);
  input.set(key, nameBytes.length);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", input));
  return new DataView(digest.buffer).getUint32(0);
}

function validName(name: string): boolean {
  return name.length > 0 && !/[\s+]/.test(name) && ![...name].some((char) => char.charCodeAt(0) < 0x20);
}

/** Parses a verifier key; refuses one whose key hash does not match its name and key. */
export async function parseVerifierKey(text: string): Promise<NoteVerifierKey> {
  // The key's base64 may itself contain "+": split on the first two only.
  const match = /^([^+]+)\+([0-9a-f]{8})\+(.+)$/s.exec(text);
  const [, name, hashHex, keyBase64] = match ?? [];
  if (!name || !validName(name) || !hashHex || !keyBase64) {
    throw new Error("verifier key is not <name>+<hash>+<key>");
  }
  const key = fromBase64(keyBase64);
  if (key?.length !== 33 || key[0] !== ED25519) throw new Error("verifier key is not an Ed25519 key");
  const expected = await keyHash(name, key);
  if (expected !== Number.parseInt(hashHex, 16)) throw new Error("verifier key hash does not match its name and key");
  const publicKey = await crypto.subtle.importKey("raw", key.slice(1), { name: "Ed25519" }, false, ["verify"]);
  return { name, keyHash: expected, publicKey };
}

/**
 * Verifies a signed note against known keys. The note is accepted when at least one signature
 * by a known key verifies; `signers` names every known key whose signature verified. A signature
 * line naming a known key that does not verify makes the whole note bad (it is a forgery attempt).
 */
export async function verifyNote(note: string, keys: readonly NoteVerifierKey[]): Promise<NoteCheck> {
  const split = note.lastIndexOf("\n\n");
  if (split < 0 || !note.endsWith("\n")) return { ok: false, reason: "malformed" };
  const text = note.slice(0, split + 1);
  const signatureLines = note.slice(split + 2, -1).split("\n");
  const message = new TextEncoder().encode(text);
  const signers: string[] = [];
  for (const line of signatureLines) {
    if (!line.startsWith(SIGNATURE_PREFIX)) return { ok: false, reason: "malformed" };
    const [name, encoded, ...rest] = line.slice(SIGNATURE_PREFIX.length).split(" ");
    const blob = encoded ? fromBase64(encoded) : undefined;
    if (!name || rest.length > 0 || !blob || blob.length < 5) return { ok: false, reason: "malformed" };
    const hash = new DataView(blob.buffer, blob.byteOffset).getUint32(0);
    const key = keys.find((candidate) => candidate.name === name && candidate.keyHash === hash);
    if (!key) continue;
    const valid = await crypto.subtle.verify({ name: "Ed25519" }, key.publicKey, blob.slice(4), message);
    if (!valid) return { ok: false, reason: "bad_signature" };
    if (!signers.includes(name)) signers.push(name);
  }
  if (signers.length === 0) return { ok: false, reason: "unsigned_by_known_key" };
  return { ok: true, text, signers };
}

/** Parses a checkpoint body (the note text): origin, decimal size, base64 root hash, extension lines. */
export function parseCheckpoint(text: string): Checkpoint | undefined {
  if (!text.endsWith("\n")) return undefined;
  const [origin, sizeText, rootText, ...extensions] = text.slice(0, -1).split("\n");
  if (!origin || !sizeText || !rootText || !/^(0|[1-9][0-9]*)$/.test(sizeText)) return undefined;
  const size = Number(sizeText);
  const rootHash = fromBase64(rootText);
  if (!Number.isSafeInteger(size) || !rootHash || rootHash.length !== 32) return undefined;
  if (extensions.some((line) => line.length === 0)) return undefined;
  return { origin, size, rootHash, extensions };
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The verifier key text for an Ed25519 public key (32 raw bytes) under `name`. */
export async function formatVerifierKey(name: string, rawPublicKey: Uint8Array): Promise<string> {
  if (!validName(name) || rawPublicKey.length !== 32) throw new Error("invalid key name or Ed25519 public key");
  const key = Uint8Array.of(ED25519, ...rawPublicKey);
  return `${name}+${(await keyHash(name, key)).toString(16).padStart(8, "0")}+${toBase64(key)}`;
}

/** One signature line for `text` (which must end in a newline), by the Ed25519 key `verifierKey` names. */
export async function signatureLine(text: string, verifierKey: string, privateKey: CryptoKey): Promise<string> {
  if (!text.endsWith("\n")) throw new Error("note text must end in a newline");
  const key = await parseVerifierKey(verifierKey);
  const signature = new Uint8Array(
    await crypto.subtle.sign({ name: "Ed25519" }, privateKey, new TextEncoder().encode(text)),
  );
  const blob = new Uint8Array(4 + signature.length);
  new DataView(blob.buffer).setUint32(0, key.keyHash);
  blob.set(signature, 4);
  return `${SIGNATURE_PREFIX}${key.name} ${toBase64(blob)}\n`;
}

/** A checkpoint body in C2SP tlog-checkpoint form. */
export function formatCheckpoint(checkpoint: Checkpoint): string {
  const lines = [checkpoint.origin, String(checkpoint.size), toBase64(checkpoint.rootHash), ...checkpoint.extensions];
  return `${lines.join("\n")}\n`;
}

/**
 * Whether a verified checkpoint carries the log's own signature and cosignatures from at least
 * `required` distinct witnesses of the consumer's configured set.
 */
export function meetsWitnessQuorum(
  signers: readonly string[],
  logName: string,
  witnessNames: readonly string[],
  required: number,
): boolean {
  if (!signers.includes(logName)) return false;
  const cosigners = new Set(signers.filter((name) => name !== logName && witnessNames.includes(name)));
  return cosigners.size >= required;
}
