import { applyD1Migrations, env } from "cloudflare:test";
import { canonicalUrl } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { migrationsBefore } from "../support/migrations.ts";

const MIGRATION = "0016_canonical_binding_values.sql";
const id = (i: number) => `b${String(i).padStart(2, "0")}`;

// Values a tenant could have stored before the control plane canonicalised them.
const REWRITTEN = [
  "HTTPS://API.Example.COM/v1",
  "https://api.example.net./v1",
  "https://api.example.org:443/v1/",
  "https://api.example.io",
  "https://api.example.ai?",
  "https://docs.example.com/guide#intro",
  "https://docs.example.com/a?#",
  "https://api.example.dev.:443?x=1#y",
  "http://legacy.example.com:80/x",
  "wss://Mcp.Example.com:443/sse",
  "https://api.example.com:8443/v2",
];
// Values the migration leaves as typed: already canonical, not a web URL, or not its to canonicalise.
const KEPT = [
  "https://api.example.com/v0",
  "pkg:npm/%40acme/payments@1.2.0",
  "git@github.com:acme/payments.git",
  "arn:aws:apigateway:eu-west-1::/restapis/abc",
  "https://bücher.example/v1",
];

describe("migration 0015: binding values in their canonical form", () => {
  it("rewrites every stored web URL to what the control plane now stores, and leaves the rest", async () => {
    const db = env.TEST_MIGRATION_DB_CANONICAL;
    const chain = env.TEST_MIGRATIONS;
    await applyD1Migrations(db, migrationsBefore(MIGRATION, chain));
    await db.batch([
      db.prepare("INSERT INTO organisations (id, name) VALUES ('org_m', 'Migrated')"),
      db.prepare(
        "INSERT INTO passports (id, organisation_id, family, state_as_of, updated_at) VALUES ('psp_m', 'org_m', 'api', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
      ),
    ]);
    const values = [...REWRITTEN, ...KEPT, "https://API.example.com/v1#dup"];
    await db.batch(
      values.map((value, i) =>
        db
          .prepare(
            "INSERT INTO bindings (id, passport_id, class, value, bound_at) VALUES (?, 'psp_m', 'endpoint', ?, '2026-01-01T00:00:00Z')",
          )
          .bind(id(i), value),
      ),
    );

    await applyD1Migrations(db, chain);
    const { results } = await db.prepare("SELECT id, value FROM bindings").all<{ id: string; value: string }>();
    const stored = new Map(results.map((r) => [r.id, r.value]));
    REWRITTEN.forEach((value, i) => {
      expect(stored.get(id(i)), value).toBe(canonicalUrl(value));
    });
    KEPT.forEach((value, i) => {
      expect(stored.get(id(REWRITTEN.length + i)), value).toBe(value);
    });
    // Its canonical form is bound already: kept as typed rather than refused by the unique index.
    expect(stored.get(id(values.length - 1))).toBe("https://API.example.com/v1#dup");
    // Search finds the canonical form.
    const found = await db
      .prepare("SELECT count(*) AS n FROM passport_search WHERE passport_search MATCH ?")
      .bind('"api.example.net"')
      .first<{ n: number }>();
    expect(found?.n).toBe(1);
  });
});
