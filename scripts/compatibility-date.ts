// The one compatibility date every Worker runs with: the top-level wrangler.toml's. Vitest's
// auxiliary Workers and the bench read it from there; the other wrangler.toml files must carry the
// same line (test/tooling/compatibility-date.test.ts fails when they drift).
import { readFileSync } from "node:fs";
import { join } from "node:path";

const LINE = /^compatibility_date\s*=\s*"(\d{4}-\d{2}-\d{2})"\s*$/m;

/** The compatibility_date line of one wrangler.toml. */
export function compatibilityDateOf(configPath: string): string {
  const date = LINE.exec(readFileSync(configPath, "utf8"))?.[1];
  if (!date) throw new Error(`${configPath} has no compatibility_date = "YYYY-MM-DD" line`);
  return date;
}

/** The project's compatibility date, from `<root>/wrangler.toml`. */
export function compatibilityDate(root: string): string {
  return compatibilityDateOf(join(root, "wrangler.toml"));
}
