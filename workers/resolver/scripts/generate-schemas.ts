// Regenerates the JSON Schemas the resolver serves from the zod schemas in packages/domain, so the
// resolver can serve them without carrying zod. Run: `pnpm run schemas` (a test fails on drift).
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { passportRecordJsonSchema } from "@passport/domain";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "src", "schemas", "passport-record.schema.json");
writeFileSync(out, `${JSON.stringify(passportRecordJsonSchema(), null, 2)}\n`);
const formatted = spawnSync("pnpm", ["exec", "biome", "format", "--write", out], { stdio: "inherit" });
process.exit(formatted.status ?? 1);
