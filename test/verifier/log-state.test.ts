import { describe, expect, it } from "vitest";
import { advanceCheckpoint } from "../../packages/protocol/src/log/checkpoint-state.ts";
import {
  decodeBundle,
  decodeEntry,
  encodeBundle,
  encodeEntry,
  type LogEntry,
} from "../../packages/protocol/src/log/entry.ts";
import {
  consistencyProof,
  type Hash,
  inclusionProof,
  leafHash,
  rootFromLeafHashes,
  verifyInclusion,
} from "../../packages/protocol/src/log/merkle.ts";

/** Three passports, interleaved publications of several versions each, in publication order. */
function publications(): LogEntry[] {
  const entries: LogEntry[] = [];
  const versions: Record<string, number> = { pp_aaaa: 0, pp_bbbb: 0, pp_cccc: 0 };
  const order = ["pp_aaaa", "pp_bbbb", "pp_aaaa", "pp_cccc", "pp_aaaa", "pp_bbbb", "pp_cccc", "pp_cccc", "pp_aaaa"];
  order.forEach((identityId, i) => {
    const recordVersion = (versions[identityId] ?? 0) + 1;
    versions[identityId] = recordVersion;
    entries.push({
      identityId,
      recordVersion,
      digest: `sha-256=${identityId}-${recordVersion}`,
      publishedAt: `2026-11-23T06:${String(i).padStart(2, "0")}:00Z`,
    });
  });
  return entries;
}

const leavesOf = (entries: LogEntry[]): Promise<Hash[]> => Promise.all(entries.map((e) => leafHash(encodeEntry(e))));

describe("log entries", () => {
  it("encode canonically and decode back; a line break in a field is refused", () => {
    for (const entry of publications()) expect(decodeEntry(encodeEntry(entry))).toEqual(entry);
    const [first] = publications();
    if (!first) throw new Error("no entries");
    expect(() => encodeEntry({ ...first, digest: "a\nb" })).toThrow();
    expect(() => encodeEntry({ ...first, recordVersion: 0 })).toThrow();
  });

  it("travel in entry bundles that decode back to the same entries; a truncated bundle is refused", () => {
    const encoded = publications().map(encodeEntry);
    const bundle = encodeBundle(encoded);
    expect(decodeBundle(bundle)).toEqual(encoded);
    expect(decodeBundle(bundle.slice(0, bundle.length - 1))).toBeUndefined();
  });

  it("prove inclusion of every version of every passport, and not of a version under another passport's index", async () => {
    const entries = publications();
    const leaves = await leavesOf(entries);
    const root = await rootFromLeafHashes(leaves);
    for (const [index, entry] of entries.entries()) {
      const proof = await inclusionProof(index, leaves);
      expect(await verifyInclusion(index, leaves.length, await leafHash(encodeEntry(entry)), proof, root)).toBe(true);
      const forged = { ...entry, digest: `${entry.digest}-replaced` };
      expect(await verifyInclusion(index, leaves.length, await leafHash(encodeEntry(forged)), proof, root)).toBe(false);
    }
  });
});

describe("remembered checkpoint", () => {
  it("accepts an extension and refuses a rolled-back log, a split view and a rewritten history", async () => {
    const leaves = await leavesOf(publications());
    const at = async (size: number) => ({ size, rootHash: await rootFromLeafHashes(leaves.slice(0, size)) });
    const remembered = await at(5);

    expect(await advanceCheckpoint(undefined, remembered, [])).toEqual({ outcome: "first" });
    expect(await advanceCheckpoint(remembered, await at(5), [])).toEqual({ outcome: "unchanged" });
    expect(await advanceCheckpoint(remembered, await at(9), await consistencyProof(5, leaves))).toEqual({
      outcome: "extended",
    });
    expect(await advanceCheckpoint(remembered, await at(3), [])).toEqual({
      outcome: "rolled_back",
      rememberedSize: 5,
      offeredSize: 3,
    });

    // A second history of the same size: the log showed this consumer another tree.
    const forkedLeaves = [...leaves.slice(0, 4), await leafHash(new TextEncoder().encode("other"))];
    const fork = { size: 5, rootHash: await rootFromLeafHashes(forkedLeaves) };
    expect(await advanceCheckpoint(remembered, fork, [])).toEqual({ outcome: "split_view", size: 5 });

    // A larger tree that does not extend the remembered one.
    const rewritten = [...forkedLeaves, ...leaves.slice(5)];
    const offered = { size: 9, rootHash: await rootFromLeafHashes(rewritten) };
    expect(await advanceCheckpoint(remembered, offered, await consistencyProof(5, rewritten))).toEqual({
      outcome: "inconsistent",
      rememberedSize: 5,
      offeredSize: 9,
    });
  });
});
