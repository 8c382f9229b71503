import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrationsBefore } from "../support/migrations.ts";

const before = migrationsBefore("0018_binding_rechecks.sql");

describe("migration 0018: bindings already verified or lapsed are put on the re-check schedule", () => {
  it("a verified binding falls due two days before its proof ends, a lapsed one now, a claimed one never", async () => {
    const db = env.TEST_MIGRATION_DB_RECHECKS;
    expect(before.length).toBeGreaterThan(0);
    await applyD1Migrations(db, before);
    const binding = (id: string, state: string, freshUntil: string | null) =>
      db
        .prepare(
          "INSERT INTO bindings (id, passport_id, class, value, bound_at, verification_state, verification_fresh_until) VALUES (?, 'psp_a', 'manifest', ?, '2026-10-01T00:00:00Z', ?, ?)",
        )
        .bind(id, `https://${id}.example.com/card.json`, state, freshUntil);
    await db.batch([
      db.prepare("INSERT INTO organisations (id, name) VALUES ('org_a', 'A')"),
      db.prepare(
        "INSERT INTO passports (id, organisation_id, family, state_as_of, updated_at) VALUES ('psp_a', 'org_a', 'agent', '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z')",
      ),
      binding("verified", "verified", "2026-10-08T12:34:56.789Z"),
      binding("lapsed", "lapsed", null),
      binding("claimed", "claimed", null),
    ]);
    const migratedAt = Date.now();

    await applyD1Migrations(db, env.TEST_MIGRATIONS);

    const { results } = await db
      .prepare("SELECT id, next_check_at, check_claim, check_failures, check_log FROM bindings ORDER BY id")
      .all<{
        id: string;
        next_check_at: string | null;
        check_claim: null;
        check_failures: number;
        check_log: string;
      }>();
    const byId = Object.fromEntries(results.map((r) => [r.id, r]));
    expect(byId.verified?.next_check_at).toBe("2026-10-06T12:34:56.789Z");
    expect(Date.parse(byId.lapsed?.next_check_at ?? "")).toBeGreaterThanOrEqual(migratedAt - 60_000);
    expect(byId.lapsed?.next_check_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(byId.claimed?.next_check_at).toBeNull();
    for (const row of results) expect([row.check_claim, row.check_failures, row.check_log]).toEqual([null, 0, "[]"]);
  });
});
