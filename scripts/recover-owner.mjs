// `npm run recover-owner -- --org ORG --subject NEW_SUBJECT --approved-by OPERATOR --reason TEXT [--shard BINDING] [--remote] [--print]`
// Operator-run recovery for an organisation whose only owner lost their identity-provider subject
// (spec 5.2; docs/roles.md). Adds the new subject as owner and records who approved it in the
// organisation's history, in one `wrangler d1 execute` against the shard that holds the
// organisation: the directory says which (docs/sharding.md), unless `--shard` names its binding.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { recoverySql, shardLookupSql } from "./recovery-sql.mjs";

const { values } = parseArgs({
  options: {
    org: { type: "string" },
    subject: { type: "string" },
    "approved-by": { type: "string" },
    reason: { type: "string" },
    shard: { type: "string" },
    remote: { type: "boolean", default: false },
    print: { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "usage: npm run recover-owner -- --org ORG --subject NEW_SUBJECT --approved-by OPERATOR --reason TEXT [--shard BINDING] [--remote] [--print]",
  );
  process.exit(0);
}
let statements;
try {
  statements = recoverySql({
    organisation: values.org,
    subject: values.subject,
    approvedBy: values["approved-by"],
    reason: values.reason,
  });
} catch (error) {
  console.error(error.message);
  process.exit(64);
}
const sql = statements.join("\n");
if (values.print) {
  console.log(sql);
  process.exit(0);
}
const config = join(import.meta.dirname, "..", "workers", "control", "wrangler.toml");
const where = values.remote ? "--remote" : "--local";

/**
 * The binding of the shard that holds the organisation: its place in the directory, looked up in
 * D1_SHARDS. A configuration without a directory has one shard, `DB`.
 */
function shardBinding() {
  if (values.shard) return values.shard;
  const lookup = spawnSync(
    "wrangler",
    ["d1", "execute", "DIRECTORY", "--config", config, where, "--json", "--command", shardLookupSql(values.org)],
    { encoding: "utf8" },
  );
  if (lookup.status !== 0) return "DB";
  const rows = JSON.parse(lookup.stdout)[0]?.results ?? [];
  const shards = JSON.parse(/^D1_SHARDS = '(.*)'$/m.exec(readFileSync(config, "utf8"))?.[1] ?? '["DB"]');
  return shards[rows[0]?.shard ?? 0] ?? "DB";
}

const result = spawnSync("wrangler", ["d1", "execute", shardBinding(), "--config", config, where, "--command", sql], {
  stdio: "inherit",
});
process.exit(result.status ?? 1);
