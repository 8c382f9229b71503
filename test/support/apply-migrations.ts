import { applyD1Migrations, env } from "cloudflare:test";
import { shardBindings } from "../../workers/control/src/db/shards.ts";

// The real migrations, applied once per test file (already-applied ones are skipped): migrations/
// to every shard the configuration lists, and the directory's own (docs/sharding.md).
for (const shard of shardBindings(env)) await applyD1Migrations(shard, env.TEST_MIGRATIONS);
if (env.DIRECTORY) await applyD1Migrations(env.DIRECTORY, env.TEST_DIRECTORY_MIGRATIONS);
