import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrationsBefore } from "../support/migrations.ts";

const before = migrationsBefore("0021_recheck_since.sql");

describe("migration 0021: passports awaiting a re-check start their re-evaluation", () => {
  it("a flagged passport's re-evaluation begins at its last state change and its proven bindings fall due; others are untouched", async () => {
    const db = env.TEST_MIGRATION_DB_REEVALUATION;
    expect(before.length).toBeGreaterThan(0);
    await applyD1Migrations(db, before);
    const passport = (id: string, flagged: number) =>
      db
        .prepare(
          "INSERT INTO passports (id, organisation_id, family, state_as_of, updated_at, recheck_required) VALUES (?, 'org_a', 'agent', '2026-10-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z', ?)",
        )
        .bind(id, flagged);
    const binding = (id: string, passportId: string, state: string, nextCheckAt: string | null) =>
      db
        .prepare(
          "INSERT INTO bindings (id, passport_id, class, value, bound_at, verification_state, next_check_at, check_claim) VALUES (?, ?, 'manifest', ?, '2026-10-01T00:00:00Z', ?, ?, 'chk_old')",
        )
        .bind(id, passportId, `https://${id}.example.com/card.json`, state, nextCheckAt);
    await db.batch([
      db.prepare("INSERT INTO organisations (id, name) VALUES ('org_a', 'A')"),
      passport("psp_flagged", 1),
      passport("psp_plain", 0),
      binding("verified", "psp_flagged", "verified", "2026-12-01T00:00:00.000Z"),
      binding("claimed", "psp_flagged", "claimed", null),
      binding("other", "psp_plain", "verified", "2026-12-01T00:00:00.000Z"),
    ]);
    const migratedAt = Date.now();

    await applyD1Migrations(db, env.TEST_MIGRATIONS);

    const passports = await db.prepare("SELECT id, recheck_since FROM passports ORDER BY id").all();
    expect(passports.results).toEqual([
      { id: "psp_flagged", recheck_since: "2026-10-01T00:00:00.000Z" },
      { id: "psp_plain", recheck_since: null },
    ]);
    const { results } = await db
      .prepare("SELECT id, next_check_at, check_claim FROM bindings ORDER BY id")
      .all<{ id: string; next_check_at: string | null; check_claim: string | null }>();
    const byId = Object.fromEntries(results.map((r) => [r.id, r]));
    expect(Date.parse(byId.verified?.next_check_at ?? "")).toBeGreaterThanOrEqual(migratedAt - 60_000);
    expect(Date.parse(byId.verified?.next_check_at ?? "")).toBeLessThan(migratedAt + 60_000);
    expect(byId.verified?.check_claim).toBeNull();
    expect(byId.claimed).toMatchObject({ next_check_at: null, check_claim: "chk_old" });
    expect(byId.other).toMatchObject({ next_check_at: "2026-12-01T00:00:00.000Z", check_claim: "chk_old" });
  });
});
