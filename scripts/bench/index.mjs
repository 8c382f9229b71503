#!/usr/bin/env node
// `npm run bench [-- <target>... ] [--rounds N] [--seconds S] [--warmup S] [--connections C]`
// Runs each named target (all of them when none is named) and prints paired ratios against its
// baselines. A target is a module in ./targets exporting `description` and `run()`.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ensureH2load } from "./lib/h2load.mjs";
import { printReport } from "./lib/report.mjs";

const TARGETS = {
  resolver: () => import("./targets/resolver.mjs"),
  control: () => import("./targets/control.mjs"),
  verifier: () => import("./targets/verifier.mjs"),
  log: () => import("./targets/log.mjs"),
  status: () => import("./targets/status.mjs"),
  provider: () => import("./targets/provider.mjs"),
  notifications: () => import("./targets/notifications.mjs"),
};

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string" },
    seconds: { type: "string" },
    warmup: { type: "string" },
    connections: { type: "string" },
    list: { type: "boolean", default: false },
  },
});

if (values.list) {
  for (const [name, load] of Object.entries(TARGETS)) console.log(`${name}: ${(await load()).description}`);
  process.exit(0);
}
const unknown = positionals.filter((name) => !(name in TARGETS));
if (unknown.length > 0) {
  console.error(`unknown bench target ${unknown.join(", ")}; targets: ${Object.keys(TARGETS).join(", ")}`);
  process.exit(64);
}
let h2loadVersion;
try {
  h2loadVersion = ensureH2load();
} catch (error) {
  console.error(error.message);
  process.exit(69);
}

// A target may export its own `defaults`; options given on the command line win over both.
const DEFAULTS = { rounds: 7, seconds: 3, warmup: 2, connections: 8 };
const given = Object.fromEntries(
  Object.entries(values)
    .filter(([key, value]) => key in DEFAULTS && value !== undefined)
    .map(([key, value]) => [key, Number(value)]),
);
const log = (message) => process.stderr.write(`[bench] ${message}\n`);
log(h2loadVersion);
let missed = false;
for (const name of positionals.length > 0 ? positionals : Object.keys(TARGETS)) {
  const target = await TARGETS[name]();
  const options = { ...DEFAULTS, ...target.defaults, ...given };
  log(`${name}: ${options.rounds} alternating rounds of ${options.seconds} s, ${options.connections} connections`);
  const report = await target.run({ root, options, log });
  missed = printReport(name, report, options) || missed;
}
process.exitCode = missed ? 1 : 0;
