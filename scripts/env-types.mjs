// Generates the Workers' types from their wrangler configs (`--check` verifies they are current).
// Nothing it writes is committed (.gitignore): `pnpm run check:types` runs it first, so a fresh
// clone type-checks, and `pnpm run env-types` makes the files for an editor.
//
// The runtime types (16k lines, the same for every Worker with the same compatibility date and
// flags) are generated once, into workers/worker-runtime.d.ts; each Worker's
// worker-configuration.d.ts holds only its Env. Its tsconfig includes both.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { parse } from "smol-toml";

const runtime = { config: "wrangler.toml", out: "workers/worker-runtime.d.ts" };
const workers = [
  { config: "wrangler.toml", out: "workers/resolver/worker-configuration.d.ts" },
  // Each Worker's types come from its own config alone: typing a service binding from another
  // Worker's config would pull that Worker's sources into this one's program, under this Env.
  // The control plane reaches the resolver through the ResolverAdminApi contract instead.
  { config: "workers/control/wrangler.toml", out: "workers/control/worker-configuration.d.ts" },
  { config: "workers/marketplace-sim/wrangler.toml", out: "workers/marketplace-sim/worker-configuration.d.ts" },
  { config: "workers/hosts-sim/wrangler.toml", out: "workers/hosts-sim/worker-configuration.d.ts" },
  { config: "workers/demo-api/wrangler.toml", out: "workers/demo-api/worker-configuration.d.ts" },
  { config: "workers/platform-model/wrangler.toml", out: "workers/platform-model/worker-configuration.d.ts" },
];
const check = process.argv.includes("--check");

/** The part of a config the runtime types depend on. */
function runtimeKey(config) {
  const { compatibility_date: date, compatibility_flags: flags = [] } = parse(readFileSync(config, "utf8"));
  return `${date} ${[...flags].sort().join(",")}`;
}

function wrangler(config, out, flags) {
  // Vars are typed as plain strings (tests and environments override them), and no local
  // .dev.vars may leak into the generated file, or it would differ between machines.
  const args = ["exec", "wrangler", "types", out, "-c", config, "--env-file", "/dev/null", ...flags];
  if (check) args.push("--check");
  return new Promise((resolve) => {
    const child = spawn("pnpm", args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("close", (status) => {
      if (status === 0) return resolve(true);
      process.stderr.write(
        check
          ? `${out} is missing or out of date with ${config}: run \`pnpm run env-types\`\n${output}`
          : `could not generate ${out} from ${config}\n${output}`,
      );
      resolve(false);
    });
  });
}

// One runtime declaration serves every Worker only while they share the date and flags.
const wanted = runtimeKey(runtime.config);
const drifted = workers.filter(({ config }) => runtimeKey(config) !== wanted);
for (const { config } of drifted) {
  process.stderr.write(
    `${config}: compatibility date and flags (${runtimeKey(config)}) differ from ${runtime.config} (${wanted}); ` +
      `${runtime.out} serves every Worker, so keep them the same\n`,
  );
}
const results = await Promise.all([
  wrangler(runtime.config, runtime.out, ["--include-env=false"]),
  ...workers.map(({ config, out }) => wrangler(config, out, ["--include-runtime=false", "--strict-vars=false"])),
]);
process.exit(drifted.length === 0 && results.every(Boolean) ? 0 : 1);
