// Type-checks every TypeScript project listed in the root tsconfig.json's references, after
// generating the Workers' types (scripts/env-types.mjs; they are not committed).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const generated = spawnSync("node", ["scripts/env-types.mjs"], { stdio: "inherit" });
if (generated.status !== 0) process.exit(generated.status ?? 1);
const { references } = JSON.parse(readFileSync("tsconfig.json", "utf8"));
let failed = false;
for (const { path } of references) {
  const result = spawnSync("pnpm", ["exec", "tsc", "-p", path, "--noEmit"], { stdio: "inherit" });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
