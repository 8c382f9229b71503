// Type-checks every TypeScript project listed in the root tsconfig.json's references.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const { references } = JSON.parse(readFileSync("tsconfig.json", "utf8"));
let failed = false;
for (const { path } of references) {
  const result = spawnSync("pnpm", ["exec", "tsc", "-p", path, "--noEmit"], { stdio: "inherit" });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
