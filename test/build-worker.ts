import { spawnSync } from "node:child_process";
import { join } from "node:path";

/**
 * Bundles a Worker exactly as `wrangler deploy` would, without deploying, and returns the path of
 * the bundled entry module. Used to run the resolver beside the control plane in tests.
 */
const built = new Map<string, string>();

export function buildWorker(root: string, config: string, name: string): string {
  const cached = built.get(name);
  if (cached) return cached;
  const outdir = join(root, ".wrangler", "build", name);
  const result = spawnSync(
    "pnpm",
    ["exec", "wrangler", "deploy", "--dry-run", "--config", config, "--outdir", outdir],
    { cwd: root, encoding: "utf8", env: { ...process.env, WRANGLER_LOG: "error" } },
  );
  if (result.status !== 0) throw new Error(`bundling ${name} failed:\n${result.stdout}\n${result.stderr}`);
  const entry = join(outdir, "index.js");
  built.set(name, entry);
  return entry;
}
