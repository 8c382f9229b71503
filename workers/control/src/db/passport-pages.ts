import type { Database } from "./client.ts";
import { byCreation, type ListFilter, listPassports, type PassportSummaryRow } from "./passports.ts";
import { type SearchRow, searchPassports } from "./search.ts";

// A page of the passport list or search over organisations in several shards (docs/sharding.md):
// each shard reads its own page, all at once, and the pages are merged by the page's key and cut
// to the limit. Any row of the merged page is among the first `limit` of its own shard after the
// cursor, so reading `limit` from each shard loses none.

/** The organisations of one shard a page reads, and the shard's handle. */
export interface ShardSlice {
  shard: number;
  db: Database;
  organisationIds: string[];
}

/** One list page in (created_at, id) order: a key every shard shares, so the merge is by the key itself. */
export async function listAcrossShards(
  slices: readonly ShardSlice[],
  filter: Omit<ListFilter, "organisationIds">,
): Promise<PassportSummaryRow[]> {
  const pages = await Promise.all(
    slices.map(({ db, organisationIds }) => listPassports(db, { ...filter, organisationIds })),
  );
  return pages.flat().sort(byCreation).slice(0, filter.limit);
}

/**
 * Where a search page ends: the last row's `seq` and shard. Each shard numbers its own `seq`, so
 * the merged order is (seq, shard); a cursor from before sharding has no shard and means "after
 * `seq` in every shard".
 */
export interface SearchPosition {
  seq: number;
  shard?: number;
}

export type ShardSearchRow = SearchRow & { shard: number };

const bySeqThenShard = (a: ShardSearchRow, b: ShardSearchRow) => a.seq - b.seq || a.shard - b.shard;

/** One search page in (seq, shard) order (`SearchPosition`). */
export async function searchAcrossShards(
  slices: readonly ShardSlice[],
  words: string[],
  filter: Omit<ListFilter, "organisationIds" | "after"> & { after?: SearchPosition },
): Promise<ShardSearchRow[]> {
  const { after, ...rest } = filter;
  const pages = await Promise.all(
    slices.map(async ({ shard, db, organisationIds }) => {
      // After (seq, s) in the order (seq, shard): a later shard's rows at the same seq come after it.
      const afterSeq =
        after === undefined ? undefined : after.shard === undefined || shard <= after.shard ? after.seq : after.seq - 1;
      const rows = await searchPassports(db, words, { ...rest, organisationIds, after: afterSeq });
      return rows.map((row) => ({ ...row, shard }));
    }),
  );
  return pages.flat().sort(bySeqThenShard).slice(0, filter.limit);
}
