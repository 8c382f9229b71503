import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { controlLayout } from "./control-layout.ts";

const src = join(import.meta.dirname, "..", "..", "workers", "control", "src");

describe("the control plane's layout (docs/control-layout.md)", () => {
  const layout = controlLayout(src);

  it("no two folders import each other, directly or around a loop", () => {
    expect(layout.cycles).toEqual([]);
  });

  it("db/ imports no feature", () => {
    expect(layout.dbImports).toEqual([]);
  });

  it("changes/ imports nothing from api/, routes/ or ui/: the rules know no HTTP", () => {
    expect(layout.forbiddenImports).toEqual([]);
  });

  it("a wing is reached only through its face, <wing>/index.ts", () => {
    expect(layout.wingInternals).toEqual([]);
  });

  it("drizzle queries are written only in db/ and the wings' query modules", () => {
    expect(layout.strayQueries).toEqual([]);
  });

  describe("the check itself, on a small tree", () => {
    let dir = "";
    const tree = (files: Record<string, string>) => {
      dir = mkdtempSync(join(tmpdir(), "control-layout-"));
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      return controlLayout(dir);
    };
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it("finds a cycle through three folders and a top-level file", () => {
      const found = tree({
        "api/a.ts": 'import type { B } from "../context.ts";',
        "context.ts": 'import { C } from "./access/c.ts";',
        "access/c.ts": 'import { A } from "../api/a.ts";\nexport const C = 1;',
        "routes/r.ts": 'import { A } from "../api/a.ts";',
      });
      expect(found.cycles).toEqual([["access", "api", "context.ts"]]);
    });

    it("finds db/ importing a feature, and a wing's internals imported from outside", () => {
      const found = tree({
        "db/acquisitions.ts": 'import { STAGES } from "../marketplace/stages.ts";',
        "marketplace/stages.ts": "export const STAGES = [];",
        "marketplace/index.ts": 'export { STAGES } from "./stages.ts";',
        "ui/page.tsx": 'import { STAGES } from "../marketplace/index.ts";',
      });
      expect(found.dbImports).toEqual(["db/acquisitions.ts -> marketplace/stages.ts"]);
      expect(found.wingInternals).toEqual(["db/acquisitions.ts -> marketplace/stages.ts"]);
    });

    it("finds changes/ importing the HTTP vocabulary, also as a type only, even without a cycle", () => {
      const found = tree({
        "changes/apply.ts": 'import { Refusal } from "../failures.ts";\nimport type { Req } from "../api/requests.ts";',
        "api/requests.ts": "export type Req = {};",
        "failures.ts": "export class Refusal extends Error {}",
        "routes/passports.ts":
          'import { apply } from "../changes/apply.ts";\nimport type { Req } from "../api/requests.ts";',
      });
      expect(found.cycles).toEqual([]);
      expect(found.forbiddenImports).toEqual(["changes/apply.ts -> api/requests.ts"]);
    });

    it("finds drizzle calls outside the query modules, also chained over lines", () => {
      const found = tree({
        "db/passports.ts": "await db.select().from(passports);",
        "marketplace/queries.ts": "await db.insert(accounts).values(row);",
        "marketplace/consumer.ts": "const rows = await db\n  .select()\n  .from(customers);\nawait env.KV.delete(key);",
        "publication/publish.ts": "const at = sql`now`;",
        "binding-checks/recheck.ts": "await db.query.passports.findFirst({ where });",
      });
      expect(found.strayQueries).toEqual([
        "binding-checks/recheck.ts:1",
        "marketplace/consumer.ts:1",
        "publication/publish.ts:1",
      ]);
    });
  });
});
