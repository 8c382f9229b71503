// The control plane's D1 migrations applied to a bench database, in order, as wrangler applies them,
// and the bench organisation seeded into it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Runs every `migrations/*.sql` file of the repository at `root` against `db`, statement by
 * statement; `folder` names another set (`migrations/directory`, the shards' directory).
 */
export async function applyMigrations(db, root, folder = "migrations") {
  const dir = join(root, folder);
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    for (const statement of readFileSync(join(dir, file), "utf8").split("--> statement-breakpoint")) {
      if (statement.trim()) await db.prepare(statement).run();
    }
  }
}

/** The organisation the benches' passports belong to (scripts/bench/baselines/write-calls.js names it too). */
export const ORGANISATION = "org_bench";
/** The subject of the benches' access tokens: the bench organisation's owner. */
export const SUBJECT = "bench-owner";

/** Adds an organisation (the bench organisation by default) and its owner (SUBJECT by default) to a migrated database. */
export async function seedOrganisation(db, organisation = ORGANISATION, owner = SUBJECT) {
  await db.batch([
    db.prepare("INSERT INTO organisations (id, name) VALUES (?, 'Bench Organisation')").bind(organisation),
    db.prepare("INSERT INTO members (organisation_id, subject, role) VALUES (?, ?, 'owner')").bind(organisation, owner),
  ]);
}
