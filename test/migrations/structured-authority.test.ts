import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrationsBefore } from "../support/migrations.ts";

const before = migrationsBefore("0019_structured_authority.sql");

describe("migration 0019: authority entries become structured or free text, bindings gain context", () => {
  it("keeps every existing entry exactly as it was, and refuses an entry that says nothing", async () => {
    const db = env.TEST_MIGRATION_DB_AUTHORITY;
    expect(before.length).toBeGreaterThan(0);
    await applyD1Migrations(db, before);
    await db.batch([
      db.prepare("INSERT INTO organisations (id, name) VALUES ('org_a', 'A')"),
      db.prepare(
        "INSERT INTO passports (id, organisation_id, family, state_as_of, updated_at) VALUES ('psp_a', 'org_a', 'agent', '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z')",
      ),
      db.prepare(
        "INSERT INTO authority (id, passport_id, action, context, granted_by, expires_at, created_at) VALUES ('au_1', 'psp_a', 'payments.refund', 'EU only', 'Finance', '2027-01-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z')",
      ),
      db.prepare(
        "INSERT INTO authority (id, passport_id, action, context) VALUES ('au_2', 'psp_a', 'deploy', 'CI only')",
      ),
      db.prepare(
        "INSERT INTO bindings (id, passport_id, class, value, bound_at) VALUES ('b_1', 'psp_a', 'manifest', 'https://a.example.com/card.json', '2026-10-01T00:00:00Z')",
      ),
    ]);
    const rows = await db.prepare("SELECT * FROM authority ORDER BY id").all();

    await applyD1Migrations(db, env.TEST_MIGRATIONS);

    const after = await db.prepare("SELECT * FROM authority ORDER BY id").all<Record<string, unknown>>();
    expect(after.results).toEqual(
      rows.results.map((row) => ({
        ...row,
        resource: null,
        amount_value: null,
        amount_currency: null,
        rate_count: null,
        rate_per: null,
        granted_by_kind: null,
        granted_by_id: null,
        granted_by_relationship: null,
        granted_by_role: null,
        granted_at: null,
      })),
    );
    const binding = await db.prepare("SELECT environment, version FROM bindings").first();
    expect(binding).toEqual({ environment: null, version: null });
    const indexes = await db.prepare("SELECT name FROM pragma_index_list('authority')").all<{ name: string }>();
    expect(indexes.results.map((i) => i.name)).toContain("authority_passport");
    // Neither free text nor a checked grant: refused by the table itself.
    await expect(
      db.prepare("INSERT INTO authority (id, passport_id, action) VALUES ('au_3', 'psp_a', 'deploy')").run(),
    ).rejects.toThrow(/authority_context_or_grant/);
    // A grantor named without the kind the statement computes from a held role: refused.
    await expect(
      db
        .prepare(
          "INSERT INTO authority (id, passport_id, action, granted_by_id, granted_by_relationship, granted_at, expires_at) VALUES ('au_5', 'psp_a', 'deploy', 'org_a', 'responsible', '2026-10-01T00:00:00Z', '2027-01-01T00:00:00Z')",
        )
        .run(),
    ).rejects.toThrow(/authority_grant_held/);
    await db
      .prepare(
        "INSERT INTO authority (id, passport_id, action, granted_by_kind, granted_by_id, granted_by_relationship, granted_at, expires_at) VALUES ('au_4', 'psp_a', 'deploy', 'organisation', 'org_a', 'responsible', '2026-10-01T00:00:00Z', '2027-01-01T00:00:00Z')",
      )
      .run();
  });
});
