import type { Database } from "./client.ts";
import type { Shards } from "./shards.ts";

/**
 * Runs `task` on every shard at once, for the work that is done shard by shard (the crons: outbox
 * drain, re-check claims, log backfill; docs/sharding.md). A shard whose task fails is logged under
 * `event` with its number and answers `undefined`: one unavailable or full database never stops
 * the others' work, and the next run tries it again.
 */
export async function onEveryShard<T>(
  shards: Shards,
  event: string,
  task: (db: Database, shard: number) => Promise<T>,
): Promise<(T | undefined)[]> {
  return Promise.all(
    shards.everyShard().map(async (db, shard) => {
      try {
        return await task(db, shard);
      } catch (error) {
        console.error(JSON.stringify({ level: "error", event, shard, message: String(error) }));
        return undefined;
      }
    }),
  );
}
