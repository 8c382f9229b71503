import { decodeEntry, encodeEntry, entryPrefix, startsWith } from "@passport/protocol";
import { type Duration, requireDuration } from "../expectation.ts";
import type { HttpPolicy } from "../http.ts";
import type { LogFinding, LogProof, ReliedOn, StaleFinding } from "../outcome.ts";
import { propagating, withinPropagation } from "../propagation.ts";
import type { PassportRecordView } from "../record.ts";
import { acceptCheckpoint, type CheckpointStore, type WithoutContext } from "./checkpoint.ts";
import { LogClient, LogFetchError, type LogFetchFailure, type TileCache } from "./client.ts";
import { findTamperedTile } from "./tile-audit.ts";

/** Default bound on the entry bundles read after a record's entry (256 entries each). */
export const DEFAULT_MAX_BUNDLES = 256;
/** Entries per bundle (C2SP tlog-tiles, height 8). */
const BUNDLE = 256;

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
  /** Tiles and bundles by path; share one between verifiers of the same log. */
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

/**
 * The version a status token names as current (published, signature checked against pinned keys):
 * when it is the record's, the newest-version scan is not needed (docs/verifier.md, Transparency log).
 */
export interface CurrentVersion {
  record_version: number;
  digest: string;
}

export type LogCheck =
  | { ok: true; proof: LogProof }
  | { ok: false; finding: LogFinding }
  /** The record and the log disagree in a way publication in progress explains (propagation.ts). */
  | { ok: false; stale: StaleFinding }
  | {
      ok: false;
      network: {
        url: string;
        failure: LogFetchFailure;
      };
    };

/** What {@link checkLog} checks: a record against the log, as of `now`. */
export interface LogCheckRequest {
  client: LogClient;
  settings: LogSettings;
  record: PassportRecordView;
  /** The `Passport-Log-Index` served with the record; undefined when it was not. */
  index: number | undefined;
  now: number;
  signal?: AbortSignal;
  /** The version a checked status token names as current, when there is one. */
  current?: CurrentVersion;
}

/** The `Passport-Log-Index` header, or undefined when absent or not a whole number. */
export function parseLogIndex(header: string | null): number | undefined {
  if (!header || !/^(0|[1-9][0-9]*)$/.test(header.trim())) return undefined;
  const index = Number(header.trim());
  return Number.isSafeInteger(index) ? index : undefined;
}

/**
 * Establishes from the transparency log that `record`, served with log index `index`, is included
 * in a checkpoint signed by the pinned key (meeting the witness policy) no older than the bound,
 * consistent with the checkpoint remembered before, and the newest version of its passport as of
 * that checkpoint. Order: checkpoint signature, witnesses, remembered checkpoint, age, inclusion,
 * newest (the resolver's hint, then the bundles after the entry).
 */
export async function checkLog(request: LogCheckRequest): Promise<LogCheck> {
  try {
    return await check(request);
  } catch (error) {
    if (error instanceof LogFetchError) return { ok: false, network: { url: error.url, failure: error.failure } };
    throw error;
  }
}

async function check({ client, settings, record, index, now, signal, current }: LogCheckRequest): Promise<LogCheck> {
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
  if (!accepted.ok && "behind" in accepted) {
    const { rememberedSize, rememberedTime, offered } = accepted.behind;
    return {
      ok: false,
      stale: propagating(
        relied_on,
        {
          lagging: "log",
          detail: `checkpoint of ${offered.size} entries offered; ${rememberedSize} accepted at ${rememberedTime}`,
        },
        `the log's checkpoint here (${offered.size} entries) is older than the one accepted at ${rememberedTime} (${rememberedSize} entries)`,
      ),
    };
  }
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
    // Either the log's entry there is another one, or a tile on the way is not the signed tree's.
    const tampered = await findTamperedTile(client.tiles(checkpoint.size, signal), checkpoint.rootHash, index);
    if (tampered) {
      return fail({
        outcome: "log_tampered",
        next_step: "deny",
        reason: `The log served ${tampered.tile}, which is not part of its signed tree, so the record's inclusion cannot be proved.`,
        tile: tampered.tile,
        detail: tampered.message,
      });
    }
    return fail({
      outcome: "not_in_log",
      next_step: "deny",
      reason: `The log's entry ${index} is not this record (version ${version}): the record served was never published as that entry.`,
      kind: "not_included",
      index,
      checkpoint_size: checkpoint.size,
      detail: `the entry at ${index} in checkpoint ${checkpoint.size} is not this record's`,
    });
  }

  // Newest by the authority: a checked status token names this very version and digest as
  // current, a statement from the passport's state that is at least as strong as the log's (a
  // later entry would be a version the authority did not know of); inclusion is proved above.
  if (current && current.record_version === version && current.digest === record.digest) {
    return { ok: true, proof: { index, checkpoint: cp, remembered, bundles_scanned: 0, newest: "status_token" } };
  }

  // Newest as of the checkpoint: no later entry of this passport with a higher version.
  const tamperedBundle = async (path: string, detail: string, n: number) => {
    // The bundle's proof runs through tiles: name a tile that is not the tree's before the bundle.
    const tile = await findTamperedTile(client.tiles(checkpoint.size, signal), checkpoint.rootHash, n * BUNDLE);
    return fail({
      outcome: "log_tampered",
      next_step: "deny",
      reason: `The log served ${tile?.tile ?? path}, which is not part of its signed tree, so the record cannot be shown to be the newest version.`,
      tile: tile?.tile ?? path,
      detail: tile?.message ?? detail,
    });
  };
  const replay = (newer: { index: number; version: number; publishedAt: string }, via: "hint" | "scan"): LogCheck =>
    withinPropagation(newer.publishedAt, now)
      ? {
          ok: false,
          stale: propagating(
            relied_on,
            { lagging: "record", newer_version: newer.version, published_at: newer.publishedAt },
            `the log holds version ${newer.version} (entry ${newer.index}, published ${newer.publishedAt}), and this copy still shows version ${version}`,
          ),
        }
      : fail({
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
  const ownEntries = entryPrefix(record.identity_id);
  const bundle = async (n: number) => {
    let read = bundles.get(n);
    if (!read) {
      read = await client.bundle(checkpoint, n, signal);
      bundles.set(n, read);
    }
    return read;
  };
  const newerIn = (
    entries: Uint8Array[],
    first: number,
  ): { index: number; version: number; publishedAt: string } | undefined => {
    for (const [offset, bytes] of entries.entries()) {
      if (first + offset <= index || !startsWith(bytes, ownEntries)) continue;
      const later = decodeEntry(bytes);
      if (later?.identityId === record.identity_id && later.recordVersion > version) {
        return { index: first + offset, version: later.recordVersion, publishedAt: later.publishedAt };
      }
    }
    return undefined;
  };

  const hint = await client.latest(record.identity_id, signal);
  if (hint && hint.index > index && hint.index < checkpoint.size) {
    const read = await bundle(Math.floor(hint.index / BUNDLE));
    if (!read.ok) return tamperedBundle(read.path, read.detail, Math.floor(hint.index / BUNDLE));
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
    if (!read.ok) return tamperedBundle(read.path, read.detail, n);
    const newer = newerIn(read.bundle.entries, read.bundle.first);
    if (newer) return replay(newer, "scan");
  }
  return { ok: true, proof: { index, checkpoint: cp, remembered, bundles_scanned: needed, newest: "log" } };
}
