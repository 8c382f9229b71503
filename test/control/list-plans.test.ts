import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { otherVerifiedHolders } from "../../workers/control/src/binding-checks/queries.ts";
import { database } from "../../workers/control/src/db/client.ts";
import {
  listPageStatement,
  passportsWithBinding,
  verifiedHoldersElsewhere,
} from "../../workers/control/src/db/passports.ts";
import { searchPageStatement } from "../../workers/control/src/db/search.ts";

// A page must cost the same at any table size and depth: SQLite has to seek an index that matches
// the page's filter and order and read one page, never scan the organisation or sort it. These are
// the plans the list and search queries get against the real migrations; an index that is dropped
// or stops matching a query fails here, not only as a slower bench.

const db = database(env.DB);

async function plan({ sql, params }: { sql: string; params: unknown[] }): Promise<string> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return results.map((row) => row.detail).join("\n");
}

const after = { createdAt: "2026-01-01T00:00:00.000Z", id: "psp_x" };

describe("list and search query plans", () => {
  it.each([
    ["no filter", {}, "passports_org_created"],
    ["environment", { environment: "staging" }, "passports_org_environment_created"],
    ["lifecycle", { lifecycle: "suspended" as const }, "passports_org_lifecycle_created"],
    ["family", { family: "agent" as const }, "passports_org_family_created"],
  ])(
    "a list page filtered by %s reads %s alone (a covering index), after a cursor too, without a sort",
    async (_name, filter, index) => {
      for (const cursor of [undefined, after]) {
        const detail = await plan(
          listPageStatement("org_plan", { ...filter, memberSubject: "someone", after: cursor, limit: 51 }),
        );
        expect(detail).toContain(`USING COVERING INDEX ${index} (organisation_id=?`);
        if (cursor) expect(detail).toMatch(/\(organisation_id=\?.*\(created_at, ?id\)>\(\?, ?\?\)|>\?\)/);
        expect(detail).not.toContain("TEMP B-TREE");
        expect(detail).not.toMatch(/SCAN passports\b/);
      }
    },
  );

  it("a search page walks the FTS index in rowid order and looks up each hit by key, without a sort", async () => {
    const detail = await plan(
      searchPageStatement("org_plan", ["billing"], { memberSubject: "someone", after: 10, limit: 51 }),
    );
    expect(detail).toMatch(/SCAN passport_search VIRTUAL TABLE INDEX/);
    expect(detail).toMatch(/SEARCH passport_search_keys USING INTEGER PRIMARY KEY/);
    expect(detail).toMatch(/SEARCH passports USING INDEX sqlite_autoindex_passports_1 \(id=\?\)/);
    expect(detail).not.toContain("TEMP B-TREE");
  });

  it("the duplicate checks start from the binding's class and value, not from the organisation's passports", async () => {
    for (const query of [
      passportsWithBinding(db, "org_plan", "api", "endpoint", ["https://a.example/"]),
      verifiedHoldersElsewhere(db, "org_plan", "endpoint", ["https://a.example/"], "2026-01-01T00:00:00.000Z"),
      // A member's check that proved a binding: with bindings_verification_due (dropped by migration
      // 0022) it walked every verified binding of the service.
      otherVerifiedHolders(db, "org_plan", { class: "endpoint", value: "https://a.example/" }),
    ]) {
      const detail = await plan(query.toSQL());
      expect(detail.split("\n")[0]).toContain("USING INDEX bindings_class_value (class=? AND value=?)");
      expect(detail).toMatch(/SEARCH passports USING INDEX sqlite_autoindex_passports_1 \(id=\?\)/);
    }
  });
});
