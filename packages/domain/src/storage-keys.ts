import { canonicalUrl } from "./canonical-url.ts";
import { sha256Base64url } from "./encoding.ts";

/** Workers KV key names shared by the publisher (control plane) and the resolver. See docs/storage.md. */
export const snapshotKey = (identityId: string): string => `passport:${identityId}`;

/** Metadata stored beside each snapshot so the resolver can answer conditionals without parsing. */
export interface SnapshotMetadata {
  digest: string;
  record_version: number;
  /** Detached JWS over the record's canonical JSON (docs/signing.md). */
  signature?: string;
  /** Index of this record version's entry in the transparency log (docs/transparency-log.md). */
  log_index?: number;
}

/** The edge-cache tag that purges one passport everywhere it is cached. */
export const identityCacheTag = (identityId: string): string => `passport-${identityId}`;

/**
 * The manifest index prefix for one agent manifest URL: `manifest:{base64url SHA-256 of the URL}:`,
 * of its canonical form (docs/canonical-urls.md), so every spelling of one manifest finds it.
 * Each agent passport bound to that manifest has the key `{prefix}{identity_id}`, so one KV list
 * by prefix finds every passport that claims the manifest.
 */
export async function manifestIndexPrefix(manifestUrl: string): Promise<string> {
  return `manifest:${await sha256Base64url(canonicalUrl(manifestUrl) ?? new URL(manifestUrl).href)}:`;
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** KV prefix listing one passport's history entries in version order. */
export const historyPrefix = (identityId: string): string => `history:${identityId}:`;
/** KV key of one history entry; its metadata holds the signed entry, so a list returns whole entries. */
export const historyKey = (identityId: string, recordVersion: number): string =>
  `${historyPrefix(identityId)}${pad(recordVersion, 10)}`;

/**
 * A publication's place in the change feed: its transparency-log index plus one. The log is one
 * sequence for the whole service (docs/transparency-log.md) while each D1 shard numbers its own
 * `publications`, so the feed takes the log's order: positions never collide between shards, stay
 * whole numbers from 1, and feed entry `seq` is log entry `seq − 1`.
 */
export const feedSeqOf = (logIndex: number): number => logIndex + 1;
/** Feed entries are grouped in pages of FEED_PAGE_SIZE sequence numbers, one KV list per page. */
export const FEED_PAGE_SIZE = 100;
export const feedPageOf = (seq: number): number => Math.floor((seq - 1) / FEED_PAGE_SIZE);
export const feedPagePrefix = (page: number): string => `feed:${pad(page, 10)}:`;
/** KV key of one feed entry; its metadata holds the entry. */
export const feedKey = (seq: number): string => `${feedPagePrefix(feedPageOf(seq))}${pad(seq, 12)}`;

/**
 * Transparency log (docs/transparency-log.md), written by the control plane's TransparencyLog
 * object and served read-only by the resolver under `{base}/log/`: the signed checkpoint, the
 * C2SP tlog-tiles tiles and entry bundles by their full-width path (`tile/0/x001/234`, one key per
 * tile holding its widest version so far; a `.p/W` request is served as its prefix), and per
 * passport the index of its newest entry.
 */
export const LOG_CHECKPOINT_KEY = "log:checkpoint";
export const logTileKey = (tilePath: string): string => `log:${tilePath}`;
export const logLatestKey = (identityId: string): string => `log:latest:${identityId}`;

/** The value of {@link logLatestKey}, served as is by `GET {base}/log/latest/{identity_id}`. */
export interface LogLatest {
  identity_id: string;
  index: number;
  record_version: number;
}
