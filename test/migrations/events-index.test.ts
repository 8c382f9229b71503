import { applyD1Migrations, type D1Migration, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";

const UNIQUE_INDEX = "CREATE UNIQUE INDEX `events_passport_version` ON `events` (`passport_id`,`record_version`)";
// What 0000_init created before it was edited in place (commit ed36a37).
const ORIGINAL_INDEX = "CREATE INDEX `events_passport` ON `events` (`passport_id`,`seq`)";

/** The migration chain as a database created before the edit went through it. */
function chainWithOriginalInit(): D1Migration[] {
  return env.TEST_MIGRATIONS.map((migration) => {
    if (migration.name !== "0000_init.sql") return migration;
    const queries = migration.queries.map((query) => query.replace(UNIQUE_INDEX, ORIGINAL_INDEX));
    expect(queries.filter((query) => query.includes(ORIGINAL_INDEX))).toHaveLength(1);
    return { ...migration, queries };
  });
}

const migrationsBefore = (chain: D1Migration[], name: string) =>
  chain.slice(
    0,
    chain.findIndex((m) => m.name === name),
  );

async function eventIndexes(db: D1Database): Promise<Record<string, number>> {
  const { results } = await db.prepare("PRAGMA index_list(`events`)").all<{ name: string; unique: number }>();
  return Object.fromEntries(results.filter((i) => !i.name.startsWith("sqlite_")).map((i) => [i.name, i.unique]));
}

async function indexColumns(db: D1Database, index: string): Promise<string[]> {
  const { results } = await db.prepare(`PRAGMA index_info(\`${index}\`)`).all<{ name: string }>();
  return results.map((c) => c.name);
}

const insertEvent = (db: D1Database, passport: string, version: number) =>
  db
    .prepare(
      "INSERT INTO events (passport_id, organisation_id, actor, at, kind, detail, record_version) VALUES (?, 'org', 'actor', '2026-01-01T00:00:00Z', 'created', '{}', ?)",
    )
    .bind(passport, version)
    .run();

describe("events are unique per passport and record version on every database", () => {
  it("a database made by the original 0000_init ends with the unique index and without the old one", async () => {
    const db = env.TEST_MIGRATION_DB_ORIGINAL_INIT;
    const chain = chainWithOriginalInit();
    await applyD1Migrations(db, migrationsBefore(chain, "0005_events_unique_per_version.sql"));
    expect(await eventIndexes(db)).toEqual({ events_passport: 0 });

    await applyD1Migrations(db, chain);
    expect(await eventIndexes(db)).toEqual({ events_passport_version: 1 });
    expect(await indexColumns(db, "events_passport_version")).toEqual(["passport_id", "record_version"]);
    await insertEvent(db, "p1", 1);
    await expect(insertEvent(db, "p1", 1)).rejects.toThrow(/UNIQUE constraint failed/);
  });

  it("a database made by the current chain has the same index", async () => {
    const db = env.TEST_MIGRATION_DB_CURRENT;
    await applyD1Migrations(db, env.TEST_MIGRATIONS);
    expect(await eventIndexes(db)).toEqual({ events_passport_version: 1 });
    expect(await indexColumns(db, "events_passport_version")).toEqual(["passport_id", "record_version"]);
  });

  it("an old database holding duplicate events is not migrated and keeps every event until they are resolved", async () => {
    const db = env.TEST_MIGRATION_DB_DUPLICATES;
    const chain = chainWithOriginalInit();
    await applyD1Migrations(db, migrationsBefore(chain, "0005_events_unique_per_version.sql"));
    await insertEvent(db, "p1", 1);
    await insertEvent(db, "p1", 1);

    await expect(applyD1Migrations(db, chain)).rejects.toThrow(/UNIQUE constraint failed/);
    expect(await eventIndexes(db)).toEqual({ events_passport: 0 });
    const applied = await db.prepare("SELECT name FROM d1_migrations").all<{ name: string }>();
    expect(applied.results.map((r) => r.name)).not.toContain("0005_events_unique_per_version.sql");
    const events = await db.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>();
    expect(events?.n).toBe(2);

    await db.prepare("DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)").run();
    await applyD1Migrations(db, chain);
    expect(await eventIndexes(db)).toEqual({ events_passport_version: 1 });
  });
});
