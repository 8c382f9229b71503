import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrationsBefore } from "../support/migrations.ts";

const before = migrationsBefore("0022_retirement_unschedules_and_derived_copies.sql");

describe("migration 0022: retired passports leave the re-check schedule; derived copies go", () => {
  it("unschedules the bindings of retired passports only, keeps every uses link, and drops the unused index", async () => {
    const db = env.TEST_MIGRATION_DB_RETIREMENT;
    await applyD1Migrations(db, before);
    const passport = (id: string, family: string, lifecycle: string) =>
      db
        .prepare(
          "INSERT INTO passports (id, organisation_id, family, lifecycle, state_as_of, updated_at) VALUES (?, 'org_a', ?, ?, '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z')",
        )
        .bind(id, family, lifecycle);
    const binding = (id: string, passportId: string) =>
      db
        .prepare(
          "INSERT INTO bindings (id, passport_id, class, value, bound_at, verification_state, next_check_at, check_claim) VALUES (?, ?, 'manifest', ?, '2026-10-01T00:00:00Z', 'verified', '2026-12-01T00:00:00.000Z', 'chk_old')",
        )
        .bind(id, passportId, `https://${id}.example.com/card.json`);
    await db.batch([
      db.prepare("INSERT INTO organisations (id, name) VALUES ('org_a', 'A')"),
      passport("psp_retired", "agent", "retired"),
      passport("psp_active", "agent", "active"),
      passport("psp_api", "api", "active"),
      binding("retired", "psp_retired"),
      binding("active", "psp_active"),
      db.prepare(
        "INSERT INTO passport_uses (agent_id, target_id, target_family, declared_at) VALUES ('psp_active', 'psp_api', 'api', '2026-10-02T00:00:00Z')",
      ),
    ]);

    await applyD1Migrations(db, env.TEST_MIGRATIONS);

    const { results } = await db.prepare("SELECT id, next_check_at, check_claim FROM bindings ORDER BY id").all();
    expect(results).toEqual([
      { id: "active", next_check_at: "2026-12-01T00:00:00.000Z", check_claim: "chk_old" },
      { id: "retired", next_check_at: null, check_claim: null },
    ]);
    const uses = await db.prepare("SELECT * FROM passport_uses").all();
    // The chain's result: 0027 keeps the target's family with the link again (uses across shards).
    expect(uses.results).toEqual([
      { agent_id: "psp_active", target_id: "psp_api", target_family: "api", declared_at: "2026-10-02T00:00:00Z" },
    ]);
    const index = await db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'bindings_verification_due'")
      .all();
    expect(index.results).toEqual([]);
  });
});
