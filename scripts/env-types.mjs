// Generates each Worker's Env types from its wrangler config (`--check` verifies they are current).
import { spawnSync } from "node:child_process";

const workers = [
  { configs: ["wrangler.toml"], out: "workers/resolver/worker-configuration.d.ts" },
  // Each Worker's types come from its own config alone: typing a service binding from another
  // Worker's config would pull that Worker's sources into this one's program, under this Env.
  // The control plane reaches the resolver through the ResolverAdminApi contract instead.
  { configs: ["workers/control/wrangler.toml"], out: "workers/control/worker-configuration.d.ts" },
  { configs: ["workers/marketplace-sim/wrangler.toml"], out: "workers/marketplace-sim/worker-configuration.d.ts" },
  { configs: ["workers/hosts-sim/wrangler.toml"], out: "workers/hosts-sim/worker-configuration.d.ts" },
];
const check = process.argv.includes("--check");
let failed = false;
for (const { configs, out } of workers) {
  const args = ["exec", "wrangler", "types", out, ...configs.flatMap((c) => ["-c", c])];
  // Vars are typed as plain strings (tests and environments override them), and no local
  // .dev.vars may leak into the generated file, or it would differ between machines.
  args.push("--strict-vars=false", "--env-file", "/dev/null");
  if (check) args.push("--check");
  const result = spawnSync("pnpm", args, { stdio: check ? ["ignore", "pipe", "pipe"] : "inherit", encoding: "utf8" });
  if (result.status !== 0) {
    failed = true;
    if (check)
      process.stderr.write(
        `${out} is out of date with ${configs.join(" and ")}: run \`pnpm run env-types\`\n${result.stderr}`,
      );
  }
}
process.exit(failed ? 1 : 0);
