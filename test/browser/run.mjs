#!/usr/bin/env node
// `npm test`'s browser step: the Dashboard's end-to-end tests in Debian's Chromium. They run
// on their own, before the workerd suites (they start the whole local service), and only where Chromium is
// installed; otherwise this says so plainly and succeeds. With --refresh-screenshots (what
// `npm run screenshots` runs) the screenshots go to docs/screenshots/, and Chromium is required.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const refresh = process.argv.includes("--refresh-screenshots");
if (!existsSync(chromium) && refresh) {
  console.error(`Chromium not found at ${chromium}: install Debian's chromium (apt-get install chromium)`);
  process.exit(1);
}
if (!existsSync(chromium)) {
  console.log(
    `skipped: Chromium not found at ${chromium}, so the Dashboard browser tests did not run (install Debian's chromium: apt-get install chromium)`,
  );
  process.exit(0);
}
const env = refresh ? { ...process.env, PASSPORT_SCREENSHOTS: "docs/screenshots" } : process.env;
const result = spawnSync("vitest", ["run", "--project", "browser"], { stdio: "inherit", env });
process.exit(result.status ?? 1);
