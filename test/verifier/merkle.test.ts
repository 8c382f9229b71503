import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  consistencyProof,
  emptyRoot,
  type Hash,
  inclusionProof,
  leafHash,
  rootFromLeafHashes,
  verifyConsistency,
  verifyInclusion,
} from "../../packages/protocol/src/log/merkle.ts";
import {
  entryTilePath,
  hashTilePath,
  hashTiles,
  leafHashesFromTiles,
  tileIndexPath,
} from "../../packages/protocol/src/log/tiles.ts";
import { CONSISTENCY_PROOFS, EMPTY_ROOT, INCLUSION_PROOFS, LEAVES, ROOTS } from "./vectors/rfc6962-merkle.ts";

const fromHex = (hex: string): Uint8Array =>
  Uint8Array.from(hex.match(/../g) ?? [], (byte) => Number.parseInt(byte, 16));
const toHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

const vectorLeaves = (): Promise<Hash[]> => Promise.all(LEAVES.map((leaf) => leafHash(fromHex(leaf))));

async function syntheticLeaves(count: number): Promise<Hash[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => leafHash(new TextEncoder().encode(`entry ${i}`))));
}

function flipped(hash: Hash): Hash {
  const copy = Uint8Array.from(hash);
  copy[0] = (copy[0] ?? 0) ^ 1;
  return copy;
}

describe("Merkle tree hashing (RFC 6962 reference vectors)", () => {
  it("computes the reference root of every prefix and of the empty tree", async () => {
    const leaves = await vectorLeaves();
    expect(toHex(await emptyRoot())).toBe(EMPTY_ROOT);
    for (let size = 1; size <= leaves.length; size++) {
      expect(toHex(await rootFromLeafHashes(leaves.slice(0, size)))).toBe(ROOTS[size - 1]);
    }
  });

  it("produces and accepts the reference inclusion proofs", async () => {
    const leaves = await vectorLeaves();
    for (const vector of INCLUSION_PROOFS) {
      const tree = leaves.slice(0, vector.size);
      const proof = await inclusionProof(vector.index, tree);
      expect(proof.map(toHex)).toEqual(vector.path);
      const root = fromHex(ROOTS[vector.size - 1] as string);
      const leaf = leaves[vector.index] as Hash;
      expect(await verifyInclusion(vector.index, vector.size, leaf, proof, root)).toBe(true);
    }
  });

  it("produces and accepts the reference consistency proofs", async () => {
    const leaves = await vectorLeaves();
    for (const vector of CONSISTENCY_PROOFS) {
      const proof = await consistencyProof(vector.first, leaves.slice(0, vector.second));
      expect(proof.map(toHex)).toEqual(vector.path);
      const firstRoot = fromHex(ROOTS[vector.first - 1] as string);
      const secondRoot = fromHex(ROOTS[vector.second - 1] as string);
      expect(await verifyConsistency(vector.first, vector.second, firstRoot, secondRoot, proof)).toBe(true);
    }
  });
});

describe("Merkle proofs", () => {
  it("proves inclusion of every leaf of every tree up to 40 leaves, and refuses a wrong leaf, index or root", async () => {
    const all = await syntheticLeaves(40);
    for (let size = 1; size <= all.length; size++) {
      const tree = all.slice(0, size);
      const root = await rootFromLeafHashes(tree);
      for (let index = 0; index < size; index++) {
        const proof = await inclusionProof(index, tree);
        const leaf = tree[index] as Hash;
        expect(await verifyInclusion(index, size, leaf, proof, root)).toBe(true);
        expect(await verifyInclusion(index, size, flipped(leaf), proof, root)).toBe(false);
        expect(await verifyInclusion(index, size, leaf, proof, flipped(root))).toBe(false);
        if (size > 1) expect(await verifyInclusion((index + 1) % size, size, leaf, proof, root)).toBe(false);
      }
      expect(await verifyInclusion(size, size, tree[0] as Hash, [], root)).toBe(false);
    }
  });

  it("proves consistency between arbitrary sizes and refuses a tampered proof or a forked root", async () => {
    const all = await syntheticLeaves(300);
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 300 })
          .chain((second) => fc.tuple(fc.integer({ min: 1, max: second }), fc.constant(second))),
        async ([first, second]) => {
          const tree = all.slice(0, second);
          const firstRoot = await rootFromLeafHashes(tree.slice(0, first));
          const secondRoot = await rootFromLeafHashes(tree);
          const proof = await consistencyProof(first, tree);
          expect(await verifyConsistency(first, second, firstRoot, secondRoot, proof)).toBe(true);
          // A log that rewrote history: same sizes, the older checkpoint's root differs.
          expect(await verifyConsistency(first, second, flipped(firstRoot), secondRoot, proof)).toBe(false);
          expect(await verifyConsistency(first, second, firstRoot, flipped(secondRoot), proof)).toBe(false);
          if (proof.length > 0) {
            const tampered = proof.map((node, i) => (i === proof.length - 1 ? flipped(node) : node));
            expect(await verifyConsistency(first, second, firstRoot, secondRoot, tampered)).toBe(false);
          }
          // A rolled-back log: the newer size is smaller than the one already accepted.
          if (first < second) expect(await verifyConsistency(second, first, secondRoot, firstRoot, proof)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("tile paths (C2SP tlog-tiles)", () => {
  it("encodes indexes in three-digit groups with x prefixes", () => {
    expect(tileIndexPath(0)).toBe("000");
    expect(tileIndexPath(999)).toBe("999");
    expect(tileIndexPath(1000)).toBe("x001/000");
    expect(tileIndexPath(1234067)).toBe("x001/x234/067");
  });

  it("names full and partial hash and entry tiles", () => {
    expect(hashTilePath(0, 1234067)).toBe("tile/0/x001/x234/067");
    expect(hashTilePath(1, 3, 42)).toBe("tile/1/003.p/42");
    expect(entryTilePath(7)).toBe("tile/entries/007");
    expect(entryTilePath(7, 128)).toBe("tile/entries/007.p/128");
    expect(() => hashTilePath(0, 0, 0)).toThrow(RangeError);
    expect(() => entryTilePath(0, 257)).toThrow(RangeError);
  });
});

describe("hash tiles", () => {
  it("re-derive the checkpoint's root from level-0 tiles, and a tampered tile no longer does", async () => {
    const leaves = await syntheticLeaves(600);
    const root = await rootFromLeafHashes(leaves);
    const tiles = await hashTiles(leaves, rootFromLeafHashes);
    expect([...tiles.keys()]).toEqual(["tile/0/000", "tile/0/001", "tile/0/002.p/88", "tile/1/000.p/2"]);
    // A level-1 hash is the root of 256 leaves.
    expect(tiles.get("tile/1/000.p/2")?.slice(32, 64)).toEqual(await rootFromLeafHashes(leaves.slice(256, 512)));

    const levelZero = ["tile/0/000", "tile/0/001", "tile/0/002.p/88"].map((path) => tiles.get(path) as Uint8Array);
    const read = leafHashesFromTiles(levelZero);
    expect(read).toHaveLength(600);
    expect(await rootFromLeafHashes(read ?? [])).toEqual(root);

    const tampered = levelZero.map((tile, i) => (i === 1 ? flipped(tile) : tile));
    expect(await rootFromLeafHashes(leafHashesFromTiles(tampered) ?? [])).not.toEqual(root);
    expect(leafHashesFromTiles([new Uint8Array(33)])).toBeUndefined();
  });
});
