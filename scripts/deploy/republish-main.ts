// `npm run republish -- --env <name> [--settings <file>]`: republishes every passport of one
// deployed environment (docs/deploy.md), one shard after another (docs/sharding.md), each with a
// cursor of its own. `npm run log-backfill -- --env <name>` (this file with --log-backfill) first
// waits for every publication to be in the transparency log (docs/transparency-log.md). Needs
// wrangler to be signed in to the environment's account.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { d1Databases, generatedDir } from "./config.ts";
import { logBackfill } from "./log-backfill.ts";
import { republishAll } from "./republish.ts";
import { callerDir, DEFAULT_SETTINGS, locateSettings, readSettings } from "./settings.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    env: { type: "string" },
    settings: { type: "string", default: process.env.DEPLOY_SETTINGS || undefined },
    "log-backfill": { type: "boolean", default: false },
  },
});
if (!values.env) throw new Error("usage: npm run republish -- --env <name>");
const environment = values.env;
const settings = readSettings(locateSettings(values.settings, { root, callerDir: callerDir() }).file).environments[
  environment
];
if (!settings) throw new Error(`${values.settings ?? DEFAULT_SETTINGS} has no environment "${environment}"`);
const { accountId } = settings;
const backfill = values["log-backfill"];
// The shards, in order; the directory holds no passports.
const shards = d1Databases(environment, settings.shards).filter(({ binding }) => binding !== "DIRECTORY");

for (const [n, { name: database }] of shards.entries()) {
  const cursorFile = join(
    generatedDir(root, environment),
    `${backfill ? "log-backfill-cursor" : "republish-cursor"}${n === 0 ? "" : `-shard-${n}`}`,
  );
  mkdirSync(dirname(cursorFile), { recursive: true });
  process.stdout.write(`shard ${n} (${database})\n`);
  await runOn(database, cursorFile);
}

async function runOn(database: string, cursorFile: string): Promise<void> {
  await (backfill ? logBackfill : republishAll)({
    query: async (sql) => {
      const result = spawnSync(
        join(root, "node_modules", ".bin", "wrangler"),
        ["d1", "execute", database, "--remote", "--json", "--command", sql],
        { cwd: root, encoding: "utf8", env: { ...process.env, CLOUDFLARE_ACCOUNT_ID: accountId } },
      );
      if (result.status !== 0) throw new Error(`wrangler d1 execute failed: ${result.stderr.trim()}`);
      const [first] = JSON.parse(result.stdout) as { results: Record<string, unknown>[] }[];
      return first?.results ?? [];
    },
    cursor: {
      read: () => (existsSync(cursorFile) ? readFileSync(cursorFile, "utf8").trim() : ""),
      write: (cursor) => writeFileSync(cursorFile, cursor),
    },
    sleep: (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000)),
    log: (line) => process.stdout.write(`${line}\n`),
  });
}
