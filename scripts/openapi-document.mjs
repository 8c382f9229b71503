#!/usr/bin/env node
// Writes the OpenAPI document the control plane serves at /openapi.json to the file named by the
// first argument, for `npm test`'s Redocly lint (check:openapi, rules in redocly.yaml). The document
// is generated at run time from the routes' zod schemas (workers/control/src/api/openapi.ts), so it
// is taken from the Worker itself: bundled as `wrangler deploy` bundles it and run once in workerd,
// with the one binding the route reads: CONTROL_BASE_URL, the server URL the document names, as
// workers/control/wrangler.toml's top-level [vars] set it.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { parse as parseToml } from "smol-toml";
import { compatibilityDate } from "./compatibility-date.ts";
import { runWrangler } from "./local-workers.mjs";

const root = join(import.meta.dirname, "..");
const target = process.argv[2];
if (!target) {
  console.error("usage: node scripts/openapi-document.mjs <output.json>");
  process.exit(2);
}
const config = join("workers", "control", "wrangler.toml");
const { vars } = parseToml(readFileSync(join(root, config), "utf8"));
const work = mkdtempSync(join(tmpdir(), "passport-openapi-"));
try {
  await runWrangler(root, ["deploy", "--dry-run", "-c", config, "--outdir", work]);
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      rootPath: work,
      scriptPath: join(work, "index.js"),
      compatibilityDate: compatibilityDate(root),
      compatibilityFlags: ["nodejs_compat"],
      cf: false,
      bindings: { CONTROL_BASE_URL: vars.CONTROL_BASE_URL },
      log: new Log(LogLevel.WARN),
    }),
  );
  try {
    const response = await mf.dispatchFetch("http://control.localhost/openapi.json");
    if (!response.ok) throw new Error(`/openapi.json answered ${response.status}: ${await response.text()}`);
    const output = resolve(root, target);
    mkdirSync(dirname(output), { recursive: true });
    // Indented, so each lint message points at a readable line.
    writeFileSync(output, `${JSON.stringify(await response.json(), null, 2)}\n`);
  } finally {
    await mf.dispose();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
