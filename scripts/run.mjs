#!/usr/bin/env node
// Entry point behind `npm start`, `npm test` and the other root scripts. It must run on any
// Node that npm ships with (the machines have Node 20), so it uses nothing but Node built-ins:
// it makes sure a Node new enough for wrangler and Vitest and the pinned pnpm are available
// (installing both into the git-ignored .tools/ folder from the npm registry when they are not),
// installs the workspace from the lockfile, then runs the named package script with that
// toolchain first on PATH.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const nodeVersion = manifest.toolchain.node;
const minimumNode = manifest.toolchain.minimumNode;
const pnpmVersion = manifest.packageManager.replace(/^pnpm@/, "").split("+")[0];
const toolsDir = join(root, ".tools");
const toolsBin = join(toolsDir, "node_modules", ".bin");

function log(message) {
  process.stderr.write(`[toolchain] ${message}\n`);
}

function atLeast(version, minimum) {
  const a = version.replace(/^v/, "").split(".").map(Number);
  const b = minimum.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if (a[i] !== b[i]) return a[i] > b[i];
  }
  return true;
}

function versionOf(command, env) {
  const result = spawnSync(command, ["--version"], { env, encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim().replace(/^v/, "") : undefined;
}

function installTools(packages) {
  log(`installing ${packages.join(", ")} into .tools/ from the npm registry`);
  mkdirSync(toolsDir, { recursive: true });
  if (!existsSync(join(toolsDir, "package.json"))) {
    writeFileSync(join(toolsDir, "package.json"), '{ "private": true }\n');
  }
  const result = spawnSync(
    "npm",
    ["install", "--prefix", toolsDir, "--no-audit", "--no-fund", "--loglevel=error", ...packages],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  if (result.status !== 0) {
    log("could not install the toolchain; check access to the npm registry");
    process.exit(result.status ?? 1);
  }
}

function toolchainEnv() {
  const wanted = [];
  if (!atLeast(process.version, minimumNode) && versionOf(join(toolsBin, "node")) !== nodeVersion) {
    wanted.push(`node@${nodeVersion}`);
  }
  const pathWithTools = [toolsBin, process.env.PATH].join(delimiter);
  const envWithTools = { ...process.env, PATH: pathWithTools };
  if (versionOf("pnpm", envWithTools) !== pnpmVersion) wanted.push(`pnpm@${pnpmVersion}`);
  if (wanted.length > 0) installTools(wanted);
  const usesLocalNode = !atLeast(process.version, minimumNode);
  const path = usesLocalNode ? pathWithTools : [dirname(process.execPath), pathWithTools].join(delimiter);
  return {
    ...process.env,
    PATH: path,
    COREPACK_ENABLE_STRICT: "0",
    npm_config_update_notifier: "false",
    // pnpm run resets INIT_CWD to the root: scripts that take a relative path resolve it from here.
    PASSPORT_CALLER_DIR: process.env.PASSPORT_CALLER_DIR || process.env.INIT_CWD || process.cwd(),
  };
}

function installWorkspace(env) {
  const lockfile = readFileSync(join(root, "pnpm-lock.yaml"));
  const stampFile = join(toolsDir, "workspace-install.stamp");
  const stamp = createHash("sha256").update(lockfile).update(nodeVersion).digest("hex");
  const installed = existsSync(join(root, "node_modules", ".modules.yaml"));
  if (installed && existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) return;
  log("installing workspace dependencies (pnpm install --frozen-lockfile)");
  const result = spawnSync("pnpm", ["install", "--frozen-lockfile", "--reporter=append-only"], {
    cwd: root,
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  mkdirSync(toolsDir, { recursive: true });
  writeFileSync(stampFile, stamp);
}

const [script, ...args] = process.argv.slice(2);
if (!script) {
  log("usage: node scripts/run.mjs <package script> [args...]");
  process.exit(64);
}
const env = toolchainEnv();
installWorkspace(env);
const child = spawn("pnpm", ["--silent", "run", script, ...args], { cwd: root, env, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 1)));
