import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrationsBefore } from "../support/migrations.ts";

const before = migrationsBefore("0027_uses_across_shards.sql");

describe("migration 0027: uses links whose target may be in another shard", () => {
  it("keeps every link with its target's family, drops the target's foreign key, and keeps the index, the limit and the fences", async () => {
    const db = env.TEST_MIGRATION_DB_USES;
    const indexesAndTriggers = async () =>
      (
        await db
          .prepare(
            "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'passport_uses' AND type IN ('index', 'trigger') ORDER BY name",
          )
          .all<{ type: string; name: string; sql: string | null }>()
      ).results;
    await applyD1Migrations(db, before);
    const passport = (id: string, family: string) =>
      db
        .prepare(
          "INSERT INTO passports (id, organisation_id, family, state_as_of, updated_at) VALUES (?, 'org_a', ?, '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z')",
        )
        .bind(id, family);
    const link = (agent: string, target: string, at = "2026-10-02T00:00:00Z") =>
      db
        .prepare("INSERT INTO passport_uses (agent_id, target_id, declared_at) VALUES (?, ?, ?)")
        .bind(agent, target, at);
    await db.batch([
      db.prepare("PRAGMA foreign_keys = ON"),
      db.prepare("INSERT INTO organisations (id, name) VALUES ('org_a', 'A')"),
      passport("psp_agent", "agent"),
      passport("psp_api", "api"),
      passport("psp_other_agent", "agent"),
      link("psp_agent", "psp_api"),
      link("psp_agent", "psp_other_agent", "2026-10-03T00:00:00Z"),
    ]);

    const old = await indexesAndTriggers();
    await applyD1Migrations(db, env.TEST_MIGRATIONS);

    const { results } = await db.prepare("SELECT * FROM passport_uses ORDER BY target_id").all();
    expect(results).toEqual([
      { agent_id: "psp_agent", target_id: "psp_api", target_family: "api", declared_at: "2026-10-02T00:00:00Z" },
      {
        agent_id: "psp_agent",
        target_id: "psp_other_agent",
        target_family: "agent",
        declared_at: "2026-10-03T00:00:00Z",
      },
    ]);
    const keys = await db.prepare('SELECT "from", "table" FROM pragma_foreign_key_list(\'passport_uses\')').all();
    expect(keys.results).toEqual([{ from: "agent_id", table: "passports" }]);
    // A target this database does not hold (another shard's passport) is a link like any other.
    await db
      .prepare(
        "INSERT INTO passport_uses (agent_id, target_id, target_family, declared_at) VALUES ('psp_agent', 'psp_elsewhere', 'api', '2026-10-04T00:00:00Z')",
      )
      .run();

    // Every index and trigger the old table had, by name and definition.
    expect(await indexesAndTriggers()).toEqual(old);
    expect(old.map((row) => row.name)).toEqual([
      "passport_uses_fenced_insert",
      "passport_uses_fenced_update",
      "passport_uses_limit",
      "passport_uses_target",
      "sqlite_autoindex_passport_uses_1",
    ]);
    // The limit per agent still holds: 50 links, the 51st refused.
    const more = Array.from({ length: 47 }, (_, i) =>
      db
        .prepare(
          "INSERT INTO passport_uses (agent_id, target_id, target_family, declared_at) VALUES ('psp_agent', ?, 'api', '2026-10-05T00:00:00Z')",
        )
        .bind(`psp_more_${i}`),
    );
    await db.batch(more);
    const over = await db
      .prepare(
        "INSERT INTO passport_uses (agent_id, target_id, target_family, declared_at) VALUES ('psp_agent', 'psp_one_too_many', 'api', '2026-10-05T00:00:00Z')",
      )
      .run()
      .then(
        () => "written",
        (error: unknown) => String(error),
      );
    expect(over).toContain("passport_uses_limit");
    // A fenced organisation's links are refused (migration 0026's fence, created again).
    await db.prepare("DELETE FROM passport_uses WHERE target_id = 'psp_more_0'").run();
    await db
      .prepare("INSERT INTO organisation_fences (organisation_id, fenced_at) VALUES ('org_a', '2026-10-06T00:00:00Z')")
      .run();
    const fenced = await db
      .prepare(
        "INSERT INTO passport_uses (agent_id, target_id, target_family, declared_at) VALUES ('psp_agent', 'psp_fenced', 'api', '2026-10-06T00:00:00Z')",
      )
      .run()
      .then(
        () => "written",
        (error: unknown) => String(error),
      );
    expect(fenced).toContain("organisation-moving");
  });
});
