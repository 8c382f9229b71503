/// <reference path="../../node-crypto.d.ts" />
import { createHash } from "node:crypto";

/**
 * The writer's side of RFC 9162 hashing, synchronous (node:crypto) so that an append runs as one
 * synchronous block inside the TransparencyLog object: nothing can interleave with it. The
 * verifier's WebCrypto implementation (packages/protocol/src/log/merkle.ts) is the reference; the
 * tests check every served root and proof against it.
 */

export const HASH_SIZE = 32;
const TILE_HEIGHT = 8;
export const TILE_WIDTH = 2 ** TILE_HEIGHT;

function sha256(...parts: Uint8Array[]): Uint8Array {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
}

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

export const leafHash = (entry: Uint8Array): Uint8Array => sha256(LEAF_PREFIX, entry);
const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array => sha256(NODE_PREFIX, left, right);

/**
 * The right edge of a tree of `size` leaves: the roots of its complete subtrees, largest first,
 * one per set bit of `size` (RFC 9162's tree is exactly these subtrees joined from the right).
 */
export type Edge = Uint8Array[];

/** A complete subtree hash the caller stores as a tile hash: level L holds subtrees of 256^L leaves. */
export type TileHash = { level: number; index: number; hash: Uint8Array };

/**
 * Appends one leaf at index `size` to the edge (in place) and returns the tile hashes that became
 * complete: the leaf itself at level 0 and, each time a merge completes a subtree of 256^L leaves,
 * that subtree's hash at level L. O(log n) hashes per append.
 */
export function appendLeaf(edge: Edge, size: number, leaf: Uint8Array): TileHash[] {
  const completed: TileHash[] = [{ level: 0, index: size, hash: leaf }];
  let hash = leaf;
  let height = 0;
  // Each set low bit of `size` is a subtree of the same height waiting on the edge: merge with it.
  while (Math.floor(size / 2 ** height) % 2 === 1) {
    const left = edge.pop();
    if (!left) throw new Error("log edge is shorter than its size says");
    hash = nodeHash(left, hash);
    height++;
    if (height % TILE_HEIGHT === 0) {
      completed.push({ level: height / TILE_HEIGHT, index: Math.floor(size / 2 ** height), hash });
    }
  }
  edge.push(hash);
  return completed;
}

/** MTH of the tree whose edge this is (SHA-256 of nothing for the empty tree). */
export function rootOfEdge(edge: Edge): Uint8Array {
  let root = edge.at(-1);
  if (!root) return sha256();
  for (let i = edge.length - 2; i >= 0; i--) root = nodeHash(edge[i] as Uint8Array, root);
  return root;
}

export function packEdge(edge: Edge): Uint8Array {
  const packed = new Uint8Array(edge.length * HASH_SIZE);
  for (const [i, hash] of edge.entries()) packed.set(hash, i * HASH_SIZE);
  return packed;
}

export function unpackEdge(packed: Uint8Array): Edge {
  const edge: Edge = [];
  for (let at = 0; at < packed.length; at += HASH_SIZE) edge.push(packed.slice(at, at + HASH_SIZE));
  return edge;
}

/**
 * The tiles that change when the published tree grows from `from` to `to` leaves: per level, every
 * tile from the one holding the first new hash to the last, with the width it has at `to`. A full
 * tile appears here once, in the step that completes it.
 */
export function changedTiles(from: number, to: number): { level: number; index: number; width: number }[] {
  const tiles: { level: number; index: number; width: number }[] = [];
  for (let level = 0; ; level++) {
    const span = TILE_WIDTH ** level;
    const before = Math.floor(from / span);
    const after = Math.floor(to / span);
    if (after === 0) break;
    if (after === before) continue;
    for (let index = Math.floor(before / TILE_WIDTH); index * TILE_WIDTH < after; index++) {
      tiles.push({ level, index, width: Math.min(TILE_WIDTH, after - index * TILE_WIDTH) });
    }
  }
  return tiles;
}

/** Reads a stored tile hash: level L, index i (the hash of leaves i·256^L .. (i+1)·256^L − 1). */
export type StoredHash = (level: number, index: number) => Uint8Array;

/** MTH of the complete, aligned subtree of `size` (a power of two) leaves from `start`. */
function subtreeHash(start: number, size: number, stored: StoredHash): Uint8Array {
  let level = 0;
  while (TILE_WIDTH ** (level + 1) <= size) level++;
  const span = TILE_WIDTH ** level;
  let hashes = Array.from({ length: size / span }, (_, i) => stored(level, start / span + i));
  while (hashes.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < hashes.length; i += 2)
      next.push(nodeHash(hashes[i] as Uint8Array, hashes[i + 1] as Uint8Array));
    hashes = next;
  }
  return hashes[0] as Uint8Array;
}

const splitPoint = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

/** MTH(D[a:b]) from stored tile hashes (RFC 9162's ranges: a complete range is always aligned). */
function rangeHash(a: number, b: number, stored: StoredHash): Uint8Array {
  const n = b - a;
  if ((n & (n - 1)) === 0) return subtreeHash(a, n, stored);
  const k = splitPoint(n);
  return nodeHash(rangeHash(a, a + k, stored), rangeHash(a + k, b, stored));
}

/** PROOF(m, D[n]) (RFC 9162 §2.1.4.1) from stored tile hashes, for a witness (tlog-witness). */
export function consistencyPath(m: number, n: number, stored: StoredHash): Uint8Array[] {
  if (m <= 0 || m >= n) return [];
  const subproof = (m: number, a: number, b: number, complete: boolean): Uint8Array[] => {
    if (m === b - a) return complete ? [] : [rangeHash(a, b, stored)];
    const k = splitPoint(b - a);
    if (m <= k) return [...subproof(m, a, a + k, complete), rangeHash(a + k, b, stored)];
    return [...subproof(m - k, a + k, b, false), rangeHash(a, a + k, stored)];
  };
  return subproof(m, 0, n, true);
}
