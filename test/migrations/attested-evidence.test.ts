import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrationsBefore } from "../support/migrations.ts";

const before = migrationsBefore("0015_attested_evidence.sql");

const evidenceRow = (id: string, passport: string, trusted: number, withdrawnAt: string | null = null) =>
  env.TEST_MIGRATION_DB_ATTESTATION.prepare(
    "INSERT INTO evidence (id, passport_id, claim, source, scope, observed_at, withdrawn_at, basis, trusted_source) VALUES (?, ?, 'agent.operator_identity', 'Demo trusted auditor', 'its operator', '2026-10-01T00:00:00Z', ?, 'asserted', ?)",
  ).bind(id, passport, withdrawnAt, trusted);

describe("migration 0015: evidence trusted by its typed source name alone is re-marked", () => {
  it("re-marks every such item untrusted and gives each passport whose record showed one its next version", async () => {
    const db = env.TEST_MIGRATION_DB_ATTESTATION;
    expect(before.length).toBeGreaterThan(0);
    await applyD1Migrations(db, before);
    const passport = (id: string) =>
      db
        .prepare(
          "INSERT INTO passports (id, organisation_id, family, state_as_of, record_version, updated_at) VALUES (?, 'org_a', 'agent', '2026-10-01T00:00:00Z', 3, '2026-10-01T00:00:00Z')",
        )
        .bind(id);
    await db.batch([
      db.prepare("INSERT INTO organisations (id, name) VALUES ('org_a', 'A')"),
      passport("psp_named"),
      passport("psp_withdrawn"),
      passport("psp_plain"),
      evidenceRow("ev_named", "psp_named", 1),
      evidenceRow("ev_plain", "psp_named", 0),
      evidenceRow("ev_gone", "psp_withdrawn", 1, "2026-10-02T00:00:00Z"),
      evidenceRow("ev_self", "psp_plain", 0),
    ]);

    await applyD1Migrations(db, env.TEST_MIGRATIONS);

    const trusted = await db
      .prepare("SELECT count(*) AS n FROM evidence WHERE trusted_source = 1")
      .first<{ n: number }>();
    expect(trusted?.n).toBe(0);
    const versions = await db.prepare("SELECT id, record_version FROM passports ORDER BY id").all();
    expect(versions.results).toEqual([
      { id: "psp_named", record_version: 4 },
      { id: "psp_plain", record_version: 3 },
      { id: "psp_withdrawn", record_version: 3 },
    ]);
    const events = await db.prepare("SELECT passport_id, actor, kind, detail, record_version FROM events").all();
    expect(events.results).toHaveLength(1);
    expect(events.results[0]).toMatchObject({
      passport_id: "psp_named",
      actor: "passport-service",
      kind: "evidence.trust_withdrawn",
      record_version: 4,
    });
    expect(JSON.parse(events.results[0]?.detail as string)).toMatchObject({ evidence_ids: ["ev_named"] });
    const outbox = await db.prepare("SELECT passport_id, record_version, bulk FROM outbox").all();
    expect(outbox.results).toEqual([{ passport_id: "psp_named", record_version: 4, bulk: 1 }]);
    const columns = await db.prepare("SELECT name FROM pragma_table_info('evidence')").all<{ name: string }>();
    expect(columns.results.map((c) => c.name)).toEqual(expect.arrayContaining(["attested_key_id", "attestation"]));
  });
});
