// The control plane's D1 migrations applied to a bench database, in order, as wrangler applies them.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Runs every `migrations/*.sql` file of the repository at `root` against `db`, statement by statement. */
export async function applyMigrations(db, root) {
  const dir = join(root, "migrations");
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    for (const statement of readFileSync(join(dir, file), "utf8").split("--> statement-breakpoint")) {
      if (statement.trim()) await db.prepare(statement).run();
    }
  }
}
