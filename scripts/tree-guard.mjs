#!/usr/bin/env node
// `npm test` must leave the work tree as it found it. `record` notes every changed or untracked
// (not ignored) file with a hash of its content; `verify` fails when that set or any hash differs,
// so tests may write only to ignored folders. Work in progress before the run is not flagged.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));

function git(args) {
  return spawnSync("git", args, { cwd: root, encoding: "utf8" });
}

function fingerprint(path) {
  const file = join(root, path);
  if (!existsSync(file)) return "missing";
  const stat = lstatSync(file);
  if (stat.isSymbolicLink()) return `link:${readlinkSync(file)}`;
  if (!stat.isFile()) return "not-a-file";
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/** Every path `git status` lists (changed, staged or untracked, not ignored) with its status and content hash. */
function treeState() {
  const result = git(["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
  if (result.status !== 0) throw new Error(`git status failed: ${result.stderr}`);
  const entries = result.stdout.split("\0");
  const state = {};
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (!entry) continue;
    const code = entry.slice(0, 2);
    const path = entry.slice(3);
    if (code[0] === "R" || code[0] === "C") i++; // the entry after a rename or copy is its source
    state[path] = `${code} ${fingerprint(path)}`;
  }
  return state;
}

const command = process.argv[2];
if (command !== "record" && command !== "verify") {
  console.error("usage: node scripts/tree-guard.mjs record|verify");
  process.exit(2);
}
const inside = git(["rev-parse", "--is-inside-work-tree"]);
if (inside.status !== 0 || inside.stdout.trim() !== "true") {
  console.log("tree-guard: skipped, not a git work tree");
  process.exit(0);
}
const stateFile = resolve(root, git(["rev-parse", "--git-path", "passport-tree-guard.json"]).stdout.trim());

if (command === "record") {
  writeFileSync(stateFile, JSON.stringify(treeState()));
  process.exit(0);
}

if (!existsSync(stateFile)) {
  console.error("tree-guard: nothing recorded; run `node scripts/tree-guard.mjs record` before the tests");
  process.exit(1);
}
const before = JSON.parse(readFileSync(stateFile, "utf8"));
const after = treeState();
const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])]
  .filter((path) => before[path] !== after[path])
  .sort();
if (changed.length > 0) {
  console.error(
    [
      "tree-guard: the tests changed files that git tracks or does not ignore:",
      ...changed.map((path) => `  ${path}`),
      "Tests must write only to ignored folders (screenshots: test-results/; `npm run screenshots` refreshes docs/screenshots/).",
    ].join("\n"),
  );
  process.exit(1);
}
console.log("tree-guard: the work tree is as the tests found it");
