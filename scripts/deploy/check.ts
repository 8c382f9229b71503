// `pnpm run check:deploy` (part of `npm test`): the dry run refuses an unchanged copy of
// deploy/settings.example.json, named by its absolute path, with one line per example value; and
// passes, building both Workers within the resolver's size budget, with the realistic settings in
// test/tooling/fixtures/settings.realistic.json, named by a relative path.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dryRun = (settings: string, stdio: "pipe" | "inherit") =>
  spawnSync(
    process.execPath,
    [
      "--experimental-strip-types",
      "--disable-warning=ExperimentalWarning",
      "scripts/deploy/main.ts",
      "--env",
      "production",
      "--dry-run",
      "--settings",
      settings,
    ],
    { cwd: root, encoding: "utf8", stdio: ["ignore", stdio, stdio] },
  );

/** Every example value of the example settings' production environment, by settings field. */
const EXAMPLE_FIELDS = [
  "accountId",
  "resolverDomain",
  "controlDomain",
  "access.teamDomain",
  "access.audience",
  "marketplace.productFamilies",
  "signingJwks.keys[0]",
];

const folder = mkdtempSync(join(tmpdir(), "passport-settings-"));
try {
  const copy = join(folder, "settings.json");
  copyFileSync(join(root, "deploy", "settings.example.json"), copy);
  const refused = dryRun(copy, "pipe");
  const lines = refused.stderr.trim().split("\n");
  const unnamed = EXAMPLE_FIELDS.filter(
    (field) => !lines.some((line) => line.startsWith(`preflight: environments.production.${field}: `)),
  );
  if (refused.status !== 1 || unnamed.length > 0 || refused.stdout.includes("wrangler deploy --dry-run")) {
    process.stderr.write(refused.stdout + refused.stderr);
    throw new Error(
      `the dry run did not refuse a copy of the example settings with one line per example value (exit ${refused.status}; not named: ${unnamed.join(", ") || "none"})`,
    );
  }
  process.stdout.write(`example settings refused, ${lines.length} lines naming ${EXAMPLE_FIELDS.join(", ")}\n`);
} finally {
  rmSync(folder, { recursive: true, force: true });
}

const passed = dryRun("test/tooling/fixtures/settings.realistic.json", "inherit");
if (passed.status !== 0) throw new Error(`the dry run refused the realistic settings (exit ${passed.status})`);
