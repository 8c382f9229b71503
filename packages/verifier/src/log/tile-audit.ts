/**
 * Checks hash tiles against a signed root, naming the first one that is not the signed tree's
 * (used by `passport log` and to explain a failed inclusion proof).
 */

import {
  emptyRoot,
  type Hash,
  hashTilePath,
  rootFromLeafHashes,
  sameHash,
  subtreeHash,
  TileShapeError,
  tileWidth,
} from "@passport/protocol";
import type { TreeTiles } from "./client.ts";

const WIDTH = 256;
const HASH_SIZE = 32;

/** A tile or bundle that does not belong to the signed tree. */
export class Tampered extends Error {
  readonly tile: string;
  constructor(tile: string, detail: string) {
    super(detail);
    this.tile = tile;
  }
}

function hashesOf(tile: Uint8Array): Hash[] {
  const hashes: Hash[] = [];
  for (let at = 0; at < tile.length; at += HASH_SIZE) hashes.push(tile.subarray(at, at + HASH_SIZE));
  return hashes;
}

/**
 * Checks hash tiles top down: the root re-derived from the tiles must be the checkpoint's (that
 * covers every partial tile, which the root is made of), and each full tile must hash to its
 * entry in the tile above. A tile that fails is named; the ones above it were already checked.
 */
export class TileAudit {
  readonly #tiles: TreeTiles;
  readonly #checked = new Map<string, Promise<void>>();

  constructor(tiles: TreeTiles) {
    this.#tiles = tiles;
  }

  async root(expected: Hash): Promise<void> {
    const size = this.#tiles.size;
    const derived = size === 0 ? await emptyRoot() : await this.#read(() => subtreeHash(this.#tiles, 0, size));
    if (!sameHash(derived, expected)) {
      throw new Tampered(
        this.#tiles.paths.join(", "),
        "the root re-derived from these tiles is not the checkpoint's root: one of them is not the signed tree's",
      );
    }
  }

  /** The level-0 tile `n`, checked. */
  async leaves(n: number): Promise<Hash[]> {
    await this.#check(0, n);
    return hashesOf(await this.#read(() => this.#tiles.tile(0, n)));
  }

  #check(level: number, n: number): Promise<void> {
    const path = hashTilePath(level, n, tileWidth(this.#tiles.size, level, n));
    let checked = this.#checked.get(path);
    if (!checked) {
      checked = this.#checkOnce(level, n, path);
      this.#checked.set(path, checked);
    }
    return checked;
  }

  async #checkOnce(level: number, n: number, path: string): Promise<void> {
    // A partial tile's hashes all went into the root, which was checked first.
    if (tileWidth(this.#tiles.size, level, n) < WIDTH) return;
    const parentIndex = Math.floor(n / WIDTH);
    await this.#check(level + 1, parentIndex);
    const tile = await this.#read(() => this.#tiles.tile(level, n));
    const parent = await this.#read(() => this.#tiles.tile(level + 1, parentIndex));
    const expected = parent.subarray((n % WIDTH) * HASH_SIZE, ((n % WIDTH) + 1) * HASH_SIZE);
    if (!sameHash(await rootFromLeafHashes(hashesOf(tile)), expected)) {
      throw new Tampered(
        path,
        `${path} does not hash to its entry in ${hashTilePath(level + 1, parentIndex, tileWidth(this.#tiles.size, level + 1, parentIndex))}`,
      );
    }
  }

  async #read<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof TileShapeError) {
        const path = hashTilePath(error.level, error.n, tileWidth(this.#tiles.size, error.level, error.n));
        throw new Tampered(path, error.message);
      }
      throw error;
    }
  }

  get count(): number {
    return this.#tiles.paths.length;
  }
}

/**
 * The tile that is not the signed tree's among those a proof about leaf `index` reads (the
 * partial tiles and the chain of tiles above the leaf), checked top down; undefined when they all are.
 */
export async function findTamperedTile(tiles: TreeTiles, root: Hash, index: number): Promise<Tampered | undefined> {
  const audit = new TileAudit(tiles);
  try {
    await audit.root(root);
    await audit.leaves(Math.floor(index / WIDTH));
    return undefined;
  } catch (error) {
    if (error instanceof Tampered) return error;
    throw error;
  }
}
