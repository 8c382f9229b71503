/**
 * RFC 9162 §2.1 Merkle tree hashing and proofs (SHA-256, leaf prefix 0x00, node prefix 0x01).
 * The one implementation shared by the verifier (checking proofs) and the control plane's log
 * writer (computing roots and proofs), so both sides hash exactly alike. No runtime dependencies:
 * WebCrypto for the writer's bulk hashing (native in workerd), and the package's own synchronous
 * SHA-256 for checking proofs, whose many small hashes would each be a thread-pool job under
 * Node's WebCrypto (the `*Sync` functions; both give the same bytes, tested).
 */
import { sha256 as sha256Sync } from "../sha256.ts";

export type Hash = Uint8Array;

async function sha256(...parts: Uint8Array[]): Promise<Hash> {
  let length = 0;
  for (const part of parts) length += part.length;
  const joined = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", joined));
}

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

/** MTH of an empty tree: SHA-256 of the empty string. */
export function emptyRoot(): Promise<Hash> {
  return sha256();
}

export function leafHash(entry: Uint8Array): Promise<Hash> {
  return sha256(LEAF_PREFIX, entry);
}

function nodeHash(left: Hash, right: Hash): Promise<Hash> {
  return sha256(NODE_PREFIX, left, right);
}

/** {@link leafHash}, computed synchronously. */
export function leafHashSync(entry: Uint8Array): Hash {
  return sha256Sync(LEAF_PREFIX, entry);
}

/** The hash of an inner node, computed synchronously. */
export function nodeHashSync(left: Hash, right: Hash): Hash {
  return sha256Sync(NODE_PREFIX, left, right);
}

/** {@link rootFromLeafHashes}, computed synchronously (a tile's or a bundle's 256 hashes at most). */
export function rootFromLeafHashesSync(leaves: readonly Hash[]): Hash {
  if (leaves.length === 0) return sha256Sync();
  if (leaves.length === 1) return leaves[0] as Hash;
  const k = splitPoint(leaves.length);
  return nodeHashSync(rootFromLeafHashesSync(leaves.slice(0, k)), rootFromLeafHashesSync(leaves.slice(k)));
}

export function sameHash(a: Hash, b: Hash): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}

/** The largest power of two strictly smaller than n (n >= 2): RFC 9162's split point k. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[n]) over leaf hashes already computed. */
export async function rootFromLeafHashes(leaves: readonly Hash[]): Promise<Hash> {
  if (leaves.length === 0) return emptyRoot();
  if (leaves.length === 1) return leaves[0] as Hash;
  const k = splitPoint(leaves.length);
  return nodeHash(await rootFromLeafHashes(leaves.slice(0, k)), await rootFromLeafHashes(leaves.slice(k)));
}

/** PATH(m, D[n]) (RFC 9162 §2.1.3.1): the audit path for leaf m. */
export async function inclusionProof(index: number, leaves: readonly Hash[]): Promise<Hash[]> {
  if (!Number.isSafeInteger(index) || index < 0 || index >= leaves.length) {
    throw new RangeError(`leaf ${index} is outside a tree of ${leaves.length}`);
  }
  if (leaves.length === 1) return [];
  const k = splitPoint(leaves.length);
  if (index < k) {
    return [...(await inclusionProof(index, leaves.slice(0, k))), await rootFromLeafHashes(leaves.slice(k))];
  }
  return [...(await inclusionProof(index - k, leaves.slice(k))), await rootFromLeafHashes(leaves.slice(0, k))];
}

/** PROOF(m, D[n]) (RFC 9162 §2.1.4.1): proof that the first m leaves are a prefix of D[n]. */
export async function consistencyProof(first: number, leaves: readonly Hash[]): Promise<Hash[]> {
  if (!Number.isSafeInteger(first) || first < 0 || first > leaves.length) {
    throw new RangeError(`size ${first} is outside a tree of ${leaves.length}`);
  }
  if (first === 0 || first === leaves.length) return [];
  return subproof(first, leaves, true);
}

async function subproof(m: number, leaves: readonly Hash[], complete: boolean): Promise<Hash[]> {
  const n = leaves.length;
  if (m === n) return complete ? [] : [await rootFromLeafHashes(leaves)];
  const k = splitPoint(n);
  if (m <= k) {
    return [...(await subproof(m, leaves.slice(0, k), complete)), await rootFromLeafHashes(leaves.slice(k))];
  }
  return [...(await subproof(m - k, leaves.slice(k), false)), await rootFromLeafHashes(leaves.slice(0, k))];
}

/** RFC 9162 §2.1.3.2: does `proof` show leaf `index` with hash `leaf` in the tree (size, root)? */
export async function verifyInclusion(
  index: number,
  size: number,
  leaf: Hash,
  proof: readonly Hash[],
  root: Hash,
): Promise<boolean> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHashSync(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHashSync(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && sameHash(r, root);
}

/** RFC 9162 §2.1.4.2: does `proof` show the tree (first, firstRoot) is a prefix of (second, secondRoot)? */
export async function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Hash,
  secondRoot: Hash,
  proof: readonly Hash[],
): Promise<boolean> {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (first === second) return proof.length === 0 && sameHash(firstRoot, secondRoot);
  if (first === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Hash;
  let sr = path[0] as Hash;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHashSync(c, fr);
      sr = nodeHashSync(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHashSync(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && sameHash(fr, firstRoot) && sameHash(sr, secondRoot);
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && Number.isInteger(Math.log2(n));
}
