#!/usr/bin/env node
// `npm test`'s browser step: the Dashboard's end-to-end tests in Debian's Chromium. They run
// on their own, before the workerd suites (they start the whole local service), and only where Chromium is
// installed; otherwise this says so plainly and succeeds.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(chromium)) {
  console.log(
    `skipped: Chromium not found at ${chromium}, so the Dashboard browser tests did not run (install Debian's chromium: apt-get install chromium)`,
  );
  process.exit(0);
}
const result = spawnSync("vitest", ["run", "--project", "browser"], { stdio: "inherit" });
process.exit(result.status ?? 1);
