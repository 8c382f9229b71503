#!/usr/bin/env node
// `npm test`'s OpenAPI step: the document the control plane serves at /openapi.json, linted by
// Redocly CLI with the rules in redocly.yaml. The document is generated at run time from the
// routes' zod schemas (workers/control/src/api/openapi.ts), so it is taken from the Worker itself:
// bundled as `wrangler deploy` bundles it and run once in workerd, with no bindings (the route
// needs none). Nothing is written into the work tree.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { compatibilityDate } from "./compatibility-date.ts";
import { runWrangler } from "./local-workers.mjs";

const root = join(import.meta.dirname, "..");
const work = mkdtempSync(join(tmpdir(), "passport-openapi-"));
try {
  await runWrangler(root, ["deploy", "--dry-run", "-c", join("workers", "control", "wrangler.toml"), "--outdir", work]);
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      rootPath: work,
      scriptPath: join(work, "index.js"),
      compatibilityDate: compatibilityDate(root),
      compatibilityFlags: ["nodejs_compat"],
      cf: false,
      log: new Log(LogLevel.WARN),
    }),
  );
  let document;
  try {
    const response = await mf.dispatchFetch("http://control.localhost/openapi.json");
    if (!response.ok) throw new Error(`/openapi.json answered ${response.status}: ${await response.text()}`);
    document = await response.text();
  } finally {
    await mf.dispose();
  }
  const file = join(work, "openapi.json");
  // Indented, so each message points at a readable line.
  writeFileSync(file, `${JSON.stringify(JSON.parse(document), null, 2)}\n`);
  const lint = spawnSync(
    process.execPath,
    [
      join(root, "node_modules", "@redocly", "cli", "bin", "cli.js"),
      "lint",
      file,
      "--config",
      join(root, "redocly.yaml"),
    ],
    {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    },
  );
  process.exitCode = lint.status ?? 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
