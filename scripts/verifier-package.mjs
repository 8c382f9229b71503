// `npm test`'s package step (docs/verifier-package.md): packs packages/verifier as a publisher
// would, with npm and with pnpm (each runs the prepack build), checks that both give the same
// package, and runs publint and Are the types wrong (attw) on npm's tarball. The tarball is left
// in .tools/verifier-package/ for the scratch-project tests (test/verifier-package.ts), which
// install it in Node, Bun, Deno and Chromium. `--pack` only packs it with npm.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const packageDir = join(root, "packages", "verifier");
const out = join(root, ".tools", "verifier-package");

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: "utf8", ...options });
  if (result.status !== 0) {
    process.stderr.write(`${command} ${args.join(" ")} failed:\n${result.stdout}${result.stderr}\n`);
    process.exit(result.status ?? 1);
  }
  return result.stdout;
}

/** Packs with `tool` into `dir`; returns the tarball's path. */
function pack(tool, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  run(tool, ["pack", "--pack-destination", dir], { cwd: packageDir });
  const [name] = readdirSync(dir).filter((file) => file.endsWith(".tgz"));
  if (!name) throw new Error(`${tool} pack wrote no tarball`);
  return join(dir, name);
}

/** The tarball's file list and its package.json. */
function contents(tarball) {
  const files = run("tar", ["-tzf", tarball]).split("\n").filter(Boolean).sort();
  const manifest = JSON.parse(run("tar", ["-xzOf", tarball, "package/package.json"]));
  return { files, manifest };
}

const started = Date.now();
const tarball = pack("npm", join(out, "npm"));
if (process.argv.includes("--pack")) process.exit(0);

// pnpm applies publishConfig itself and drops the pack hooks; npm gets both from the prepack step.
const npmPacked = contents(tarball);
const pnpmDir = mkdtempSync(join(tmpdir(), "passport-pnpm-pack-"));
const pnpmPacked = contents(pack("pnpm", pnpmDir));
rmSync(pnpmDir, { recursive: true, force: true });
const differs = [];
if (!isDeepStrictEqual(npmPacked.files, pnpmPacked.files)) differs.push("file lists");
if (!isDeepStrictEqual(npmPacked.manifest, pnpmPacked.manifest)) differs.push("package.json");
if (differs.length > 0) {
  process.stderr.write(`npm pack and pnpm pack differ in their ${differs.join(" and ")}:\n`);
  process.stderr.write(`${JSON.stringify({ npm: npmPacked, pnpm: pnpmPacked }, null, 2)}\n`);
  process.exit(1);
}
for (const required of ["package/LICENSE", "package/README.md", "package/CHANGELOG.md", "package/dist/cli/bin.js"]) {
  if (!npmPacked.files.includes(required)) {
    process.stderr.write(`the tarball lacks ${required}\n`);
    process.exit(1);
  }
}
if (npmPacked.files.some((file) => file.startsWith("package/src/") || file.endsWith(".tsbuildinfo"))) {
  process.stderr.write("the tarball ships sources or build state it should not\n");
  process.exit(1);
}

run("pnpm", ["exec", "publint", "run", tarball, "--strict"]);
// Every resolution mode: node10, node16 from CommonJS and from ESM, bundler.
run("pnpm", ["exec", "attw", tarball, "--format", "table-flipped"]);
const size = readFileSync(tarball).byteLength;
console.log(
  `verifier package: ${npmPacked.files.length} files, ${(size / 1024).toFixed(1)} KiB packed; ` +
    `npm and pnpm pack agree; publint and attw pass (${((Date.now() - started) / 1000).toFixed(1)} s)`,
);
