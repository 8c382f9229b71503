import { describe, expect, it } from "vitest";
import {
  consistencyProof,
  type Hash,
  inclusionProof,
  leafHash,
  rootFromLeafHashes,
  verifyConsistency,
} from "../../packages/protocol/src/log/merkle.ts";
import {
  chunkInclusionPath,
  consistencyPath,
  type TileReader,
  tileWidth,
  verifyChunk,
} from "../../packages/protocol/src/log/tile-proofs.ts";
import { hashTilePath, hashTiles } from "../../packages/protocol/src/log/tiles.ts";

const leavesOf = (count: number): Promise<Hash[]> =>
  Promise.all(Array.from({ length: count }, (_, i) => leafHash(new TextEncoder().encode(`entry ${i}`))));

/** The tiles of a tree of `size` leaves, served from memory as a log would serve them. */
async function reader(leaves: Hash[], size: number): Promise<TileReader & { read: string[] }> {
  const tiles = await hashTiles(leaves.slice(0, size), rootFromLeafHashes);
  const read: string[] = [];
  return {
    size,
    read,
    tile: async (level, n) => {
      const path = hashTilePath(level, n, tileWidth(size, level, n));
      read.push(path);
      const tile = tiles.get(path);
      if (!tile) throw new Error(`no ${path}`);
      return tile;
    },
  };
}

describe("proofs computed from tiles", () => {
  it("equal RFC 9162's proofs from every leaf, in trees around the tile edges", async () => {
    const leaves = await leavesOf(600);
    for (const size of [1, 2, 3, 7, 8, 255, 256, 257, 300, 511, 512, 513, 600]) {
      const tiles = await reader(leaves, size);
      const all = leaves.slice(0, size);
      // Every leaf of small trees; in larger ones a spread of them, always the first and last.
      const step = Math.max(1, Math.floor(size / 12));
      for (const index of new Set([...Array.from({ length: Math.ceil(size / step) }, (_, i) => i * step), size - 1])) {
        expect(await chunkInclusionPath(tiles, 0, index)).toEqual(await inclusionProof(index, all));
      }
      for (const first of new Set([
        ...Array.from({ length: Math.ceil(size / step) }, (_, i) => i * step),
        size - 1,
        size,
      ])) {
        expect(await consistencyPath(tiles, first)).toEqual(await consistencyProof(first, all));
      }
    }
  });

  it("prove a whole entry bundle (a chunk of 256 leaves, the last one shorter) against the root", async () => {
    const leaves = await leavesOf(600);
    const tiles = await reader(leaves, 600);
    const root = await rootFromLeafHashes(leaves);
    for (const [n, chunk] of [leaves.slice(0, 256), leaves.slice(256, 512), leaves.slice(512)].entries()) {
      expect(await verifyChunk(tiles, root, 8, n, await rootFromLeafHashes(chunk))).toBe(true);
    }
    const forged = [...leaves.slice(256, 511), await leafHash(new TextEncoder().encode("forged"))];
    expect(await verifyChunk(tiles, root, 8, 1, await rootFromLeafHashes(forged))).toBe(false);
  });

  it("read one tile per level: an inclusion proof at 600 entries reads two tiles", async () => {
    const leaves = await leavesOf(600);
    const tiles = await reader(leaves, 600);
    await chunkInclusionPath(tiles, 0, 100);
    expect(new Set(tiles.read)).toEqual(new Set(["tile/0/000", "tile/0/002.p/88", "tile/1/000.p/2"]));
    const proof = await consistencyPath(tiles, 300);
    expect(
      await verifyConsistency(
        300,
        600,
        await rootFromLeafHashes(leaves.slice(0, 300)),
        await rootFromLeafHashes(leaves),
        proof,
      ),
    ).toBe(true);
  });
});
