import type { Database } from "./client.ts";
import { type Membership, membershipsOf, organisationsOf } from "./organisations.ts";
import type { Shards } from "./shards.ts";

// The reads designed to cross shards (docs/sharding.md, "What crosses shards, on purpose"): one
// statement per shard, all shards at once, merged here. Memberships live in each organisation's
// shard and the directory does not index them, so a caller's organisations are found by asking
// every shard; N is small (tens), and the statements run in parallel.

/** Runs `read` on every shard at once; the answers come back in shard order. */
export function acrossShards<R>(shards: Shards, read: (db: Database, shard: number) => Promise<R>): Promise<R[]> {
  return Promise.all(shards.everyShard().map((db, shard) => read(db, shard)));
}

/** A row found in a shard, with the shard's number. */
export type InShard<R> = R & { shard: number };

/**
 * Keeps one row per organisation. An organisation is in two shards only while a move copies it
 * (docs/sharding.md, "Organisation moves"): the directory's shard is the copy that counts.
 */
async function oncePerOrganisation<R extends { shard: number }>(
  shards: Shards,
  rows: R[],
  organisationOf: (row: R) => string,
): Promise<R[]> {
  const seen = new Map<string, R[]>();
  for (const row of rows) seen.set(organisationOf(row), [...(seen.get(organisationOf(row)) ?? []), row]);
  const kept: R[] = [];
  for (const [organisationId, copies] of seen) {
    if (copies.length === 1) {
      kept.push(...copies);
      continue;
    }
    const { shard } = await shards.placementOf(organisationId);
    kept.push(...copies.filter((row) => row.shard === shard));
  }
  return kept;
}

/** The caller's memberships in every shard, each with the shard that holds the organisation, by organisation id. */
export async function membershipsEverywhere(shards: Shards, subject: string): Promise<InShard<Membership>[]> {
  const found = (
    await acrossShards(shards, async (db, shard) => (await membershipsOf(db, subject)).map((m) => ({ ...m, shard })))
  ).flat();
  const kept = await oncePerOrganisation(shards, found, (m) => m.organisationId);
  return kept.sort((a, b) => (a.organisationId < b.organisationId ? -1 : a.organisationId > b.organisationId ? 1 : 0));
}

/** The caller's organisations with their role, from every shard, by organisation id ("my organisations"). */
export async function organisationsEverywhere(shards: Shards, subject: string) {
  const found = (
    await acrossShards(shards, async (db, shard) => (await organisationsOf(db, subject)).map((o) => ({ ...o, shard })))
  ).flat();
  const kept = await oncePerOrganisation(shards, found, (o) => o.id);
  return kept.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Organisation ids grouped by the shard that holds them, from memberships found by `membershipsEverywhere`. */
export function organisationsByShard(memberships: readonly InShard<Membership>[]): Map<number, string[]> {
  const grouped = new Map<number, string[]>();
  for (const m of memberships) grouped.set(m.shard, [...(grouped.get(m.shard) ?? []), m.organisationId]);
  return grouped;
}
