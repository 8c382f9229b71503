import {
  FEED_PAGE_SIZE,
  type FeedEntry,
  feedPageOf,
  feedPagePrefix,
  historyKey,
  type SignedHistoryEntry,
} from "@passport/domain";

/**
 * Versions per history block. A history key ends in the version padded to 10 digits, so the keys
 * of versions [1000·b, 1000·b + 999] share their first 7 digits: a block is one KV prefix that
 * holds at most 1000 keys, which one `list` (KV's largest page) returns whole and in order.
 */
const HISTORY_BLOCK = 1000;
const blockOf = (version: number) => Math.floor(version / HISTORY_BLOCK);
const blockPrefix = (identityId: string, block: number) => historyKey(identityId, block * HISTORY_BLOCK).slice(0, -3);

export interface Page<T> {
  entries: T[];
  /** True when entries after the last one returned were already published. */
  more: boolean;
}

/**
 * The signed history entries of one passport with `record_version > after`, at most `limit`, in
 * version order. KV `list` has no start-after, so `after` picks the block that holds `after + 1`
 * (`first`, listed by {@link listFirstHistoryBlock} beside the snapshot read) and entries up to
 * `after` are dropped from it; further blocks are listed only when the page spills over, up to the
 * block of `current` (the snapshot's record_version).
 * @example
 * const first = await listFirstHistoryBlock(env.SNAPSHOTS, id, 0);
 * const page = await readHistory(env.SNAPSHOTS, id, 0, 100, 7, first);
 * page.entries[0]?.record_version; // 1
 */
export async function readHistory(
  kv: KVNamespace,
  identityId: string,
  after: number,
  limit: number,
  current: number | undefined,
  first: SignedHistoryEntry[],
): Promise<Page<SignedHistoryEntry>> {
  let block = blockOf(after + 1);
  const lastBlock = current === undefined ? block : blockOf(current);
  const entries: SignedHistoryEntry[] = [];
  let listed = first;
  for (;;) {
    for (const entry of listed) if (entry.record_version > after) entries.push(entry);
    if (entries.length > limit || block >= lastBlock) break;
    block++;
    listed = await listHistoryBlock(kv, identityId, block);
  }
  return { entries: entries.slice(0, limit), more: entries.length > limit };
}

/** One KV list of the history block that holds version `after + 1`. */
export function listFirstHistoryBlock(
  kv: KVNamespace,
  identityId: string,
  after: number,
): Promise<SignedHistoryEntry[]> {
  return listHistoryBlock(kv, identityId, blockOf(after + 1));
}

async function listHistoryBlock(kv: KVNamespace, identityId: string, block: number): Promise<SignedHistoryEntry[]> {
  const { keys } = await kv.list<SignedHistoryEntry>({ prefix: blockPrefix(identityId, block) });
  return keys.flatMap((key) => (key.metadata ? [key.metadata] : []));
}

/**
 * Feed entries with `seq > after`, at most `limit` (≤ FEED_PAGE_SIZE), in sequence order: one KV
 * list of the feed page that holds `after + 1`, and one of the next page when that one runs out.
 * @example
 * const page = await readFeed(env.SNAPSHOTS, 0, 100);
 * page.entries[0]?.seq; // 1
 */
export async function readFeed(kv: KVNamespace, after: number, limit: number): Promise<Page<FeedEntry>> {
  const page = feedPageOf(after + 1);
  const entries = (await listFeedPage(kv, page)).filter((entry) => entry.seq > after);
  if (entries.length <= limit) entries.push(...(await listFeedPage(kv, page + 1)));
  return { entries: entries.slice(0, limit), more: entries.length > limit };
}

async function listFeedPage(kv: KVNamespace, page: number): Promise<FeedEntry[]> {
  const { keys } = await kv.list<FeedEntry>({ prefix: feedPagePrefix(page), limit: FEED_PAGE_SIZE });
  return keys.flatMap((key) => (key.metadata ? [key.metadata] : []));
}
