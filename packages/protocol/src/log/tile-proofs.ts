/**
 * RFC 9162 proofs computed from C2SP tlog-tiles (height 8) instead of from every leaf hash. Any
 * hash a proof needs is the root of a range of leaves; a perfect, aligned range of 2^h leaves is
 * the root of 2^(h mod 8) consecutive hashes of one tile at level ⌊h/8⌋, and any other range
 * splits as RFC 9162 splits trees. Tiles are not trusted: every proof built here is checked
 * against a signed root, so a tampered tile only makes a proof fail.
 */
import { type Hash, nodeHashSync, rootFromLeafHashesSync, verifyInclusion } from "./merkle.ts";

const TILE_HEIGHT = 8;
const TILE_WIDTH = 2 ** TILE_HEIGHT;
const HASH_SIZE = 32;

/** The hash tiles of one tree size. */
export interface TileReader {
  /** The tree size the tiles belong to. */
  readonly size: number;
  /** The tile at `level`, index `n`, of the width it has in a tree of `size` (see {@link tileWidth}). */
  tile(level: number, n: number): Promise<Uint8Array>;
}

/** How many hashes tile `n` of `level` holds in a tree of `size` leaves (256 when full). */
export function tileWidth(size: number, level: number, n: number): number {
  const count = Math.floor(size / TILE_WIDTH ** level);
  return Math.max(0, Math.min(TILE_WIDTH, count - n * TILE_WIDTH));
}

/** A tile that cannot hold the hashes asked of it: too short, or of the wrong length. */
export class TileShapeError extends Error {
  override name = "TileShapeError";
  readonly level: number;
  readonly n: number;
  constructor(level: number, n: number, detail: string) {
    super(detail);
    this.level = level;
    this.n = n;
  }
}

/** The largest power of two strictly smaller than n (n >= 2): RFC 9162's split point. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && Number.isInteger(Math.log2(n));
}

/**
 * Subtree roots already computed from a tile, by the tile's bytes: a cached full tile is the same
 * object on every read, so its inner hashes are computed once. Derived from the bytes alone, so
 * reusing them trusts nothing more than the tile itself.
 */
const innerRoots = new WeakMap<Uint8Array, Map<number, Hash>>();

/** The root of the perfect subtree of 2^height leaves starting at leaf `index * 2^height`. */
async function perfectSubtree(reader: TileReader, height: number, index: number): Promise<Hash> {
  const level = Math.floor(height / TILE_HEIGHT);
  const count = 2 ** (height % TILE_HEIGHT);
  const first = index * count;
  const n = Math.floor(first / TILE_WIDTH);
  const offset = first % TILE_WIDTH;
  const tile = await reader.tile(level, n);
  if (tile.length < (offset + count) * HASH_SIZE) {
    throw new TileShapeError(level, n, `the tile holds ${tile.length} bytes, too few for hash ${offset + count - 1}`);
  }
  if (count === 1) return tile.subarray(offset * HASH_SIZE, (offset + 1) * HASH_SIZE);
  let roots = innerRoots.get(tile);
  if (!roots) {
    roots = new Map();
    innerRoots.set(tile, roots);
  }
  const key = offset * TILE_WIDTH + count;
  let root = roots.get(key);
  if (!root) {
    const hashes: Hash[] = [];
    for (let i = offset; i < offset + count; i++) hashes.push(tile.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE));
    root = rootFromLeafHashesSync(hashes);
    roots.set(key, root);
  }
  return root;
}

/** MTH of leaves [lo, hi), hi <= the reader's size, read from tiles. */
export async function subtreeHash(reader: TileReader, lo: number, hi: number): Promise<Hash> {
  const n = hi - lo;
  if (n < 1 || hi > reader.size) throw new RangeError(`leaves ${lo}..${hi} are outside a tree of ${reader.size}`);
  if (isPowerOfTwo(n) && lo % n === 0) return perfectSubtree(reader, Math.log2(n), lo / n);
  const k = splitPoint(n);
  return nodeHashSync(await subtreeHash(reader, lo, lo + k), await subtreeHash(reader, lo + k, hi));
}

/**
 * The audit path of chunk `index` of 2^height leaves (the last chunk may be shorter) in the tree
 * of the reader's size. Grouping leaves in aligned chunks of 2^height keeps RFC 9162's tree shape,
 * so the path verifies with `verifyInclusion(index, ⌈size / 2^height⌉, chunkRoot, path, root)`;
 * height 0 is a single leaf.
 */
export async function chunkInclusionPath(reader: TileReader, height: number, index: number): Promise<Hash[]> {
  const unit = 2 ** height;
  const start = index * unit;
  if (!Number.isSafeInteger(start) || start < 0 || start >= reader.size) {
    throw new RangeError(`chunk ${index} of ${unit} leaves is outside a tree of ${reader.size}`);
  }
  const walk = async (lo: number, hi: number): Promise<Hash[]> => {
    if (hi - lo <= unit) return [];
    const k = splitPoint(hi - lo);
    return start < lo + k
      ? [...(await walk(lo, lo + k)), await subtreeHash(reader, lo + k, hi)]
      : [...(await walk(lo + k, hi)), await subtreeHash(reader, lo, lo + k)];
  };
  return walk(0, reader.size);
}

/** Whether `chunkRoot` is the root of chunk `index` of 2^height leaves in the tree (reader's size, root). */
export async function verifyChunk(
  reader: TileReader,
  root: Hash,
  height: number,
  index: number,
  chunkRoot: Hash,
): Promise<boolean> {
  const path = await chunkInclusionPath(reader, height, index);
  return verifyInclusion(index, Math.ceil(reader.size / 2 ** height), chunkRoot, path, root);
}

/** PROOF(first, D[size]) (RFC 9162 §2.1.4.1) from the tiles of the larger tree. */
export async function consistencyPath(reader: TileReader, first: number): Promise<Hash[]> {
  if (!Number.isSafeInteger(first) || first < 0 || first > reader.size) {
    throw new RangeError(`size ${first} is outside a tree of ${reader.size}`);
  }
  if (first === 0 || first === reader.size) return [];
  const sub = async (m: number, lo: number, hi: number, complete: boolean): Promise<Hash[]> => {
    if (m === hi - lo) return complete ? [] : [await subtreeHash(reader, lo, hi)];
    const k = splitPoint(hi - lo);
    if (m <= k) return [...(await sub(m, lo, lo + k, complete)), await subtreeHash(reader, lo + k, hi)];
    return [...(await sub(m - k, lo + k, hi, false)), await subtreeHash(reader, lo, lo + k)];
  };
  return sub(first, 0, reader.size, true);
}
