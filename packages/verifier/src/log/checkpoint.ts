/**
 * The checkpoint side of the verifier's log check: verify the checkpoint under the pinned keys,
 * and replace the remembered one only with a consistent extension (docs/transparency-log.md).
 */
import type { RememberedCheckpoint } from "@passport/protocol";
import type { CheckpointView, LogFinding, LogProof } from "../outcome.ts";
import { withinPropagation } from "../propagation.ts";
import { type LogClient, toBase64, type VerifiedCheckpoint } from "./client.ts";
import { findTamperedTile } from "./tile-audit.ts";

/** How far ahead of the verifier's clock a checkpoint's time may be (clock skew). */
const MAX_CLOCK_SKEW_MS = 300_000;

/** A finding before the record's context (log origin, relied_on) is added. */
export type WithoutContext<T> = T extends unknown ? Omit<T, "log" | "relied_on"> : never;

/** A checkpoint remembered between runs, in a form any store can keep. */
export interface StoredCheckpoint {
  size: number;
  /** Base64, as in the checkpoint. */
  root_hash: string;
  time?: string;
}

/**
 * Where the verifier keeps the last checkpoint it accepted, per log origin. Keep it where it
 * outlives the process (a file, a database row): a checkpoint remembered only in memory catches a
 * rollback or a split view only within one run.
 */
export interface CheckpointStore {
  load(origin: string): Promise<StoredCheckpoint | undefined>;
  save(origin: string, checkpoint: StoredCheckpoint): Promise<void>;
}

/** A {@link CheckpointStore} in memory. */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #checkpoints = new Map<string, StoredCheckpoint>();
  async load(origin: string): Promise<StoredCheckpoint | undefined> {
    return this.#checkpoints.get(origin);
  }
  async save(origin: string, checkpoint: StoredCheckpoint): Promise<void> {
    this.#checkpoints.set(origin, { ...checkpoint });
  }
}

export type AcceptedCheckpoint =
  | { ok: true; checkpoint: VerifiedCheckpoint; view: CheckpointView; remembered: LogProof["remembered"] }
  | { ok: false; finding: WithoutContext<LogFinding> }
  /**
   * A smaller tree than the remembered one, offered within the propagation window after the
   * remembered one was signed: another location's copy of the checkpoint has not caught up yet
   * (propagation.ts). Nothing is accepted and the remembered checkpoint stays.
   */
  | { ok: false; behind: { rememberedSize: number; rememberedTime: string; offered: CheckpointView } };

/**
 * Fetches the log's checkpoint, verifies it under the pinned key and witness policy, and, with a
 * store, replaces the remembered checkpoint only under `advanceCheckpoint` (a consistency proof
 * computed from tiles when the tree grew).
 */
export async function acceptCheckpoint(
  client: LogClient,
  store: CheckpointStore | undefined,
  now: number,
  signal?: AbortSignal,
): Promise<AcceptedCheckpoint> {
  const log = client.origin;
  const failed = (finding: WithoutContext<LogFinding>): AcceptedCheckpoint => ({ ok: false, finding });
  const signed = await client.checkpoint(signal);
  if (!signed.ok && signed.problem === "witness_quorum_unmet") {
    return failed({
      outcome: "witness_quorum_unmet",
      next_step: "delay",
      reason: `The log's checkpoint carries ${signed.cosigners.length} of the ${signed.required} witness cosignatures you require, so it may be a view shown only to you. Wait for the witnesses to cosign, and do not rely on the record meanwhile.`,
      required: signed.required,
      cosigners: signed.cosigners,
    });
  }
  if (!signed.ok) {
    return failed({
      outcome: "checkpoint_invalid",
      next_step: "deny",
      reason: `The transparency log's checkpoint is not one the pinned log key signed (${signed.detail}). Nothing can be proved against it; do not rely on the record.`,
      kind: signed.problem,
      detail: signed.detail,
    });
  }
  const checkpoint = signed.checkpoint;
  const cp = view(checkpoint, now);
  // A checkpoint dated ahead would stay "fresh" past any bound.
  if (checkpoint.timeMs > now + MAX_CLOCK_SKEW_MS) {
    return failed({
      outcome: "checkpoint_invalid",
      next_step: "deny",
      reason: `The log's checkpoint is dated ${checkpoint.time}, ahead of this clock by more than five minutes, so its age cannot be judged. Check this machine's clock; otherwise do not rely on the log.`,
      kind: "future_time",
      detail: `checkpoint time ${checkpoint.time} is ahead of the verifier's clock`,
    });
  }

  let remembered: LogProof["remembered"] = "not_kept";
  if (store) {
    const stored = await store.load(log);
    const storedRoot = stored ? fromBase64(stored.root_hash) : undefined;
    const before: RememberedCheckpoint | undefined =
      stored && storedRoot ? { size: stored.size, rootHash: storedRoot } : undefined;
    const advance = await client.advance(before, checkpoint, signal);
    switch (advance.outcome) {
      case "rolled_back":
        if (stored?.time && withinPropagation(stored.time, now)) {
          return {
            ok: false,
            behind: { rememberedSize: advance.rememberedSize, rememberedTime: stored.time, offered: cp },
          };
        }
        return failed({
          outcome: "rolled_back",
          next_step: "deny",
          reason: `The log offered a tree of ${advance.offeredSize} entries, smaller than the ${advance.rememberedSize} already accepted: the log was rolled back, or this is not the log you saw before.`,
          remembered_size: advance.rememberedSize,
          offered_size: advance.offeredSize,
        });
      case "split_view":
        return failed({
          outcome: "split_view",
          next_step: "deny",
          reason: `The log signed two different trees of ${advance.size} entries: it shows different histories to different consumers. Do not rely on it; report both checkpoints.`,
          size: advance.size,
          remembered_root: stored?.root_hash ?? "",
          offered_root: cp.root_hash,
        });
      case "inconsistent": {
        // The consistency proof runs through tiles: a tile that is not the new tree's is no rewrite.
        const tile = await findTamperedTile(
          client.tiles(checkpoint.size, signal),
          checkpoint.rootHash,
          advance.rememberedSize - 1,
        );
        if (tile) {
          return failed({
            outcome: "log_tampered",
            next_step: "deny",
            reason: `The log served ${tile.tile}, which is not part of its signed tree, so the checkpoint cannot be shown to extend the one accepted before.`,
            tile: tile.tile,
            detail: tile.message,
          });
        }
        return failed({
          outcome: "inconsistent",
          next_step: "deny",
          reason: `The log's tree of ${advance.offeredSize} entries does not extend the tree of ${advance.rememberedSize} accepted before: its history was rewritten.`,
          remembered_size: advance.rememberedSize,
          offered_size: advance.offeredSize,
        });
      }
      default:
        remembered = advance.outcome;
        if (advance.outcome !== "unchanged") {
          await store.save(log, { size: checkpoint.size, root_hash: cp.root_hash, time: checkpoint.time });
        }
    }
  }

  return { ok: true, checkpoint, view: cp, remembered };
}

function fromBase64(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function view(checkpoint: VerifiedCheckpoint, now: number): CheckpointView {
  return {
    origin: checkpoint.origin,
    size: checkpoint.size,
    root_hash: toBase64(checkpoint.rootHash),
    time: checkpoint.time,
    age_seconds: Math.max(0, (now - checkpoint.timeMs) / 1000),
    cosigners: checkpoint.cosigners,
  };
}
