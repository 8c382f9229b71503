// Builds the published package into dist/: ESM with its declarations (dist/), CommonJS with its
// own (dist/cjs/, marked "type": "commonjs") and the `passport` CLI (dist/cli/, ESM).
//
// In the workspace the package is used as TypeScript source: package.json's exports and bin point
// at src/. The published ones are under publishConfig. pnpm pack and publish apply publishConfig
// themselves; npm does not, so `--prepack` (the prepack script, which both run) builds and then
// writes package.json with publishConfig applied, keeping the workspace manifest aside, and
// `--postpack` puts it back. docs/verifier-package.md says why.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = dirname(dirname(fileURLToPath(import.meta.url)));
const manifestPath = join(dir, "package.json");
const keptPath = join(dir, ".workspace-package.json");
/** publishConfig members that configure publishing itself rather than replace a manifest field. */
const PUBLISHING_ONLY = new Set(["access", "registry", "tag", "provenance"]);

function tsc(config) {
  const result = spawnSync("tsc", ["-p", config], { cwd: dir, stdio: "inherit" });
  if (result.error?.code === "ENOENT") {
    console.error("tsc not found: install the workspace first (pnpm install at the repository root, or npm test)");
    process.exit(1);
  }
  if (result.status !== 0) {
    console.error(`tsc -p ${config} failed`);
    process.exit(result.status ?? 1);
  }
}

function restore() {
  if (existsSync(keptPath)) renameSync(keptPath, manifestPath);
}

/** The manifest as published: publishConfig's fields over the workspace's, the publishing settings kept. */
function publishedManifest(manifest) {
  const { publishConfig = {}, ...rest } = manifest;
  const published = { ...rest };
  const settings = {};
  for (const [key, value] of Object.entries(publishConfig)) {
    if (PUBLISHING_ONLY.has(key)) settings[key] = value;
    else published[key] = value;
  }
  if (Object.keys(settings).length > 0) published.publishConfig = settings;
  // As pnpm does: the pack hooks run here, never for a consumer (and scripts/ is not shipped).
  if (published.scripts) {
    const { prepack: _prepack, postpack: _postpack, ...scripts } = published.scripts;
    published.scripts = scripts;
  }
  return published;
}

const mode = process.argv[2];
if (mode === "--postpack") {
  restore();
  process.exit(0);
}
// A pack that failed before its postpack left the published manifest in place: start from the kept one.
restore();
rmSync(join(dir, "dist"), { recursive: true, force: true });
tsc("tsconfig.build.json");
tsc("tsconfig.cjs.json");
writeFileSync(join(dir, "dist", "cjs", "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
if (mode === "--prepack") {
  const text = readFileSync(manifestPath, "utf8");
  writeFileSync(keptPath, text);
  writeFileSync(manifestPath, `${JSON.stringify(publishedManifest(JSON.parse(text)), null, 2)}\n`);
}
