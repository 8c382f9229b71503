import { type Duration, requireDuration } from "./expectation.ts";
import type { HttpPolicy } from "./http.ts";
import type { RememberedCheckpoint } from "./log/checkpoint-state.ts";
import {
  LogClient,
  LogFetchError,
  type LogFetchFailure,
  type TileCache,
  toBase64,
  type VerifiedCheckpoint,
} from "./log/client.ts";
import { decodeEntry, encodeEntry } from "./log/entry.ts";
import type { CheckpointView, LogFinding, LogProof, ReliedOn } from "./outcome.ts";
import type { PassportRecordView } from "./record.ts";

/** Default bound on the entry bundles read after a record's entry (256 entries each). */
export const DEFAULT_MAX_BUNDLES = 256;
/** Entries per bundle (C2SP tlog-tiles, height 8). */
const BUNDLE = 256;
/** How far ahead of the verifier's clock a checkpoint's time may be (clock skew). */
const MAX_CLOCK_SKEW_MS = 300_000;

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

/** The `log` option of the verifier: what the caller pins and how fresh the checkpoint must be. */
export interface LogOptions {
  /** The log's note verifier key, `<origin>+<hex8>+<base64>`, obtained from a source you trust. */
  key: string;
  /** Oldest acceptable checkpoint (its `time` line), e.g. `"1h"`. */
  maxAge: Duration;
  /** Witness verifier keys you trust. */
  witnesses?: string[];
  /** Cosignatures required from `witnesses`; default: all of them. */
  witnessQuorum?: number;
  /** Most entry bundles read after the record's entry to find a later version; default 256. */
  maxBundles?: number;
  /** The last accepted checkpoint, kept between calls; without it, checkpoints are not compared. */
  store?: CheckpointStore;
  /** Full tiles and bundles (immutable); share one between verifiers of the same log. */
  cache?: TileCache;
}

export interface LogSettings {
  maxAgeSeconds: number;
  maxBundles: number;
  store?: CheckpointStore;
}

/** Validates `options` (a bad one is a `TypeError`, the caller's bug) and builds the log client. */
export async function logClientFor(
  base: string,
  http: HttpPolicy,
  options: LogOptions,
): Promise<{ client: LogClient; settings: LogSettings }> {
  const maxAgeSeconds = requireDuration(options.maxAge, "log.maxAge");
  const maxBundles = options.maxBundles ?? DEFAULT_MAX_BUNDLES;
  if (!Number.isSafeInteger(maxBundles) || maxBundles < 0) {
    throw new TypeError(`log.maxBundles: ${maxBundles} is not a whole number`);
  }
  const client = await LogClient.create({
    base,
    http,
    key: options.key,
    witnesses: options.witnesses ?? [],
    witnessQuorum: options.witnessQuorum ?? options.witnesses?.length ?? 0,
    ...(options.cache ? { cache: options.cache } : {}),
  });
  return { client, settings: { maxAgeSeconds, maxBundles, ...(options.store ? { store: options.store } : {}) } };
}

type WithoutContext<T> = T extends unknown ? Omit<T, "log" | "relied_on"> : never;

export type LogCheck =
  | { ok: true; proof: LogProof }
  | { ok: false; finding: LogFinding }
  | {
      ok: false;
      network: {
        url: string;
        failure: LogFetchFailure;
      };
    };

export type AcceptedCheckpoint =
  | { ok: true; checkpoint: VerifiedCheckpoint; view: CheckpointView; remembered: LogProof["remembered"] }
  | { ok: false; finding: WithoutContext<LogFinding> };

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
      case "inconsistent":
        return failed({
          outcome: "inconsistent",
          next_step: "deny",
          reason: `The log's tree of ${advance.offeredSize} entries does not extend the tree of ${advance.rememberedSize} accepted before: its history was rewritten.`,
          remembered_size: advance.rememberedSize,
          offered_size: advance.offeredSize,
        });
      default:
        remembered = advance.outcome;
        if (advance.outcome !== "unchanged") {
          await store.save(log, { size: checkpoint.size, root_hash: cp.root_hash, time: checkpoint.time });
        }
    }
  }

  return { ok: true, checkpoint, view: cp, remembered };
}

/** The `Passport-Log-Index` header, or undefined when absent or not a whole number. */
export function parseLogIndex(header: string | null): number | undefined {
  if (!header || !/^(0|[1-9][0-9]*)$/.test(header.trim())) return undefined;
  const index = Number(header.trim());
  return Number.isSafeInteger(index) ? index : undefined;
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

/**
 * Establishes from the transparency log that `record`, served with log index `index`, is included
 * in a checkpoint signed by the pinned key (meeting the witness policy) no older than the bound,
 * consistent with the checkpoint remembered before, and the newest version of its passport as of
 * that checkpoint. Order: checkpoint signature, witnesses, remembered checkpoint, age, inclusion,
 * newest (the resolver's hint, then the bundles after the entry).
 */
export async function checkLog(
  client: LogClient,
  settings: LogSettings,
  record: PassportRecordView,
  index: number | undefined,
  now: number,
  signal?: AbortSignal,
): Promise<LogCheck> {
  try {
    return await check(client, settings, record, index, now, signal);
  } catch (error) {
    if (error instanceof LogFetchError) return { ok: false, network: { url: error.url, failure: error.failure } };
    throw error;
  }
}

async function check(
  client: LogClient,
  settings: LogSettings,
  record: PassportRecordView,
  index: number | undefined,
  now: number,
  signal?: AbortSignal,
): Promise<LogCheck> {
  const log = client.origin;
  const relied_on: ReliedOn = {
    identity_id: record.identity_id,
    ...(record.record_version !== undefined ? { record_version: record.record_version } : {}),
    ...(record.digest !== undefined ? { digest: record.digest } : {}),
  };
  const fail = (finding: WithoutContext<LogFinding>): LogCheck => ({
    ok: false,
    finding: { ...finding, log, relied_on } as LogFinding,
  });

  const accepted = await acceptCheckpoint(client, settings.store, now, signal);
  if (!accepted.ok) return fail(accepted.finding);
  const { checkpoint, view: cp, remembered } = accepted;

  if (cp.age_seconds > settings.maxAgeSeconds) {
    return fail({
      outcome: "checkpoint_stale",
      next_step: "re-resolve",
      reason: `The log's newest checkpoint is from ${checkpoint.time}, older than the ${settings.maxAgeSeconds} s you allow, so it cannot show the record is the newest version now. Retry later; a log that stops signing checkpoints cannot be relied on.`,
      checkpoint: cp,
      max_age_seconds: settings.maxAgeSeconds,
    });
  }

  const version = record.record_version;
  if (index === undefined || version === undefined || !record.digest || !record.published_at) {
    return fail({
      outcome: "not_in_log",
      next_step: "deny",
      reason:
        index === undefined
          ? "The resolver did not say where the record is in the transparency log (no Passport-Log-Index), so its inclusion cannot be proved."
          : "The record lacks the version, digest or publication time its log entry is made of.",
      kind: "no_index",
      checkpoint_size: checkpoint.size,
      detail: index === undefined ? "no Passport-Log-Index header" : "record_version, digest or published_at missing",
    });
  }
  if (index >= checkpoint.size) {
    return fail({
      outcome: "not_in_log",
      next_step: "re-resolve",
      reason: `The record's log entry ${index} is not in the newest checkpoint (${checkpoint.size} entries) yet; a just-published record appears in the next one. Retry shortly.`,
      kind: "beyond_checkpoint",
      index,
      checkpoint_size: checkpoint.size,
      detail: `index ${index} is not below the checkpoint size ${checkpoint.size}`,
    });
  }
  const entry = encodeEntry({
    identityId: record.identity_id,
    recordVersion: version,
    digest: record.digest,
    publishedAt: record.published_at,
  });
  if (!(await client.proveInclusion(checkpoint, index, entry, signal))) {
    return fail({
      outcome: "not_in_log",
      next_step: "deny",
      reason: `The log's entry ${index} is not this record (version ${version}): the record served was never published as that entry, or the log's tiles are not its signed tree.`,
      kind: "not_included",
      index,
      checkpoint_size: checkpoint.size,
      detail: `the inclusion proof of entry ${index} computed from tiles does not lead to the root of checkpoint ${checkpoint.size}`,
    });
  }

  // Newest as of the checkpoint: no later entry of this passport with a higher version.
  const tampered = (path: string, detail: string) =>
    fail({
      outcome: "log_tampered",
      next_step: "deny",
      reason: `The log served ${path}, which is not part of its signed tree, so the record cannot be shown to be the newest version.`,
      tile: path,
      detail,
    });
  const replay = (newer: { index: number; version: number }, via: "hint" | "scan") =>
    fail({
      outcome: "not_newest",
      next_step: "re-resolve",
      reason: `The log holds version ${newer.version} of this passport (entry ${newer.index}), newer than the version ${version} served: an old record is being replayed as current. Re-resolve from a resolver you trust, and do not rely on this one.`,
      record_version: version,
      newer_version: newer.version,
      newer_index: newer.index,
      via,
      checkpoint: cp,
    });
  const bundles = new Map<number, Awaited<ReturnType<LogClient["bundle"]>>>();
  const bundle = async (n: number) => {
    let read = bundles.get(n);
    if (!read) {
      read = await client.bundle(checkpoint, n, signal);
      bundles.set(n, read);
    }
    return read;
  };
  const newerIn = (entries: Uint8Array[], first: number): { index: number; version: number } | undefined => {
    for (const [offset, bytes] of entries.entries()) {
      if (first + offset <= index) continue;
      const later = decodeEntry(bytes);
      if (later?.identityId === record.identity_id && later.recordVersion > version) {
        return { index: first + offset, version: later.recordVersion };
      }
    }
    return undefined;
  };

  const hint = await client.latest(record.identity_id, signal);
  if (hint && hint.index > index && hint.index < checkpoint.size) {
    const read = await bundle(Math.floor(hint.index / BUNDLE));
    if (!read.ok) return tampered(read.path, read.detail);
    const newer = newerIn(read.bundle.entries.slice(hint.index % BUNDLE, (hint.index % BUNDLE) + 1), hint.index);
    if (newer) return replay(newer, "hint");
  }

  const firstBundle = Math.floor((index + 1) / BUNDLE);
  const lastBundle = Math.floor((checkpoint.size - 1) / BUNDLE);
  const needed = index + 1 < checkpoint.size ? lastBundle - firstBundle + 1 : 0;
  if (needed > settings.maxBundles) {
    return fail({
      outcome: "newest_unverified",
      next_step: "challenge",
      reason: `The record is in the log, but ${needed} entry bundles follow it, more than the ${settings.maxBundles} you allow reading, so it was not established that it is the newest version. Raise the bound, or decide without it.`,
      kind: "scan_limit",
      index,
      bundles_needed: needed,
      max_bundles: settings.maxBundles,
      checkpoint: cp,
    });
  }
  for (let n = firstBundle; n < firstBundle + needed; n++) {
    const read = await bundle(n);
    if (!read.ok) return tampered(read.path, read.detail);
    const newer = newerIn(read.bundle.entries, read.bundle.first);
    if (newer) return replay(newer, "scan");
  }
  return { ok: true, proof: { index, checkpoint: cp, remembered, bundles_scanned: needed } };
}
