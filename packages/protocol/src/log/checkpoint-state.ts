import { type Hash, sameHash, verifyConsistency } from "./merkle.ts";

/** The part of an accepted checkpoint a consumer remembers. */
export interface RememberedCheckpoint {
  size: number;
  rootHash: Hash;
}

export type CheckpointAdvance =
  | { outcome: "first" | "unchanged" | "extended" }
  | { outcome: "rolled_back"; rememberedSize: number; offeredSize: number }
  | { outcome: "split_view"; size: number }
  | { outcome: "inconsistent"; rememberedSize: number; offeredSize: number };

/**
 * Decides whether a newly offered checkpoint may replace the remembered one: it must be at least
 * as large, equal in root when equal in size (otherwise the log shows two histories: a split
 * view), and provably an extension (RFC 9162 consistency proof) when larger.
 */
export async function advanceCheckpoint(
  remembered: RememberedCheckpoint | undefined,
  offered: RememberedCheckpoint,
  consistencyProof: readonly Hash[],
): Promise<CheckpointAdvance> {
  if (!remembered) return { outcome: "first" };
  if (offered.size < remembered.size) {
    return { outcome: "rolled_back", rememberedSize: remembered.size, offeredSize: offered.size };
  }
  if (offered.size === remembered.size) {
    return sameHash(offered.rootHash, remembered.rootHash)
      ? { outcome: "unchanged" }
      : { outcome: "split_view", size: offered.size };
  }
  const consistent = await verifyConsistency(
    remembered.size,
    offered.size,
    remembered.rootHash,
    offered.rootHash,
    consistencyProof,
  );
  return consistent
    ? { outcome: "extended" }
    : { outcome: "inconsistent", rememberedSize: remembered.size, offeredSize: offered.size };
}
