// Builds the published package into dist/: ESM with its declarations (dist/), CommonJS with its
// own (dist/cjs/, marked "type": "commonjs") and the `passport` CLI (dist/cli/, ESM).
//
// @passport/protocol is bundled, not depended on: it is compiled into dist/protocol/ (and
// dist/cjs/protocol/), and every import of it in the output is rewritten to a relative path, so
// the published package installs with no dependency of its own (docs/verifier-package.md).
//
// In the workspace the package is used as TypeScript source: package.json's exports and bin point
// at src/. The published ones are under publishConfig. pnpm pack and publish apply publishConfig
// themselves; npm does not, so `--prepack` (the prepack script, which both run) builds and then
// writes package.json with publishConfig applied, keeping the workspace manifest aside, and
// `--postpack` puts it back. docs/verifier-package.md says why.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const dir = dirname(dirname(fileURLToPath(import.meta.url)));
const manifestPath = join(dir, "package.json");
const keptPath = join(dir, ".workspace-package.json");
/** publishConfig members that configure publishing itself rather than replace a manifest field. */
const PUBLISHING_ONLY = new Set(["access", "registry", "tag", "provenance"]);

function tsc(config, ...options) {
  const result = spawnSync("tsc", ["-p", config, ...options], { cwd: dir, stdio: "inherit" });
  if (result.error?.code === "ENOENT") {
    console.error("tsc not found: install the workspace first (pnpm install at the repository root, or npm test)");
    process.exit(1);
  }
  if (result.status !== 0) {
    console.error(`tsc -p ${config} failed`);
    process.exit(result.status ?? 1);
  }
}

const PROTOCOL = /(["'])@passport\/protocol\1/g;

/** Files under `root`, skipping the bundled protocol's own folder. */
function outputFiles(root) {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(js|d\.ts)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => !relative(root, file).startsWith("protocol"));
}

/** Points the imports of @passport/protocol in `root` (one build's output) at `root/protocol/index.js`. */
function bundleProtocol(root, skip = () => false) {
  for (const file of outputFiles(root)) {
    if (skip(file)) continue;
    const text = readFileSync(file, "utf8");
    if (!text.includes("@passport/protocol")) continue;
    let target = relative(dirname(file), join(root, "protocol", "index.js")).replaceAll("\\", "/");
    if (!target.startsWith(".")) target = `./${target}`;
    writeFileSync(
      file,
      text.replace(PROTOCOL, (_, quote) => `${quote}${target}${quote}`),
    );
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
  // Workspace packages are bundled into dist/ (see above), never installed by a consumer.
  if (published.devDependencies) {
    published.devDependencies = Object.fromEntries(
      Object.entries(published.devDependencies).filter(([, range]) => !String(range).startsWith("workspace:")),
    );
  }
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
tsc("tsconfig.protocol.json");
tsc(
  "tsconfig.protocol.json",
  "--outDir",
  "dist/cjs/protocol",
  "--module",
  "CommonJS",
  "--verbatimModuleSyntax",
  "false",
);
const dist = join(dir, "dist");
bundleProtocol(dist, (file) => file.startsWith(join(dist, "cjs")));
bundleProtocol(join(dist, "cjs"));
writeFileSync(join(dir, "dist", "cjs", "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
if (mode === "--prepack") {
  const text = readFileSync(manifestPath, "utf8");
  writeFileSync(keptPath, text);
  writeFileSync(manifestPath, `${JSON.stringify(publishedManifest(JSON.parse(text)), null, 2)}\n`);
}
