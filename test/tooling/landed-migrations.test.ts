import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { landedMigrationProblems, MANIFEST } from "./landed-migrations.ts";

const migrations = join(import.meta.dirname, "..", "..", "migrations");

describe("landed migrations are never edited", () => {
  it("every migration file is landed, unchanged, and journaled", () => {
    expect(landedMigrationProblems(migrations)).toEqual([]);
  });

  it("so is every migration of the directory database (docs/sharding.md)", () => {
    expect(landedMigrationProblems(join(migrations, "directory"))).toEqual([]);
  });

  describe("the check itself, on a copy of the folder", () => {
    let copy = "";
    const fresh = () => {
      copy = mkdtempSync(join(tmpdir(), "migrations-"));
      cpSync(migrations, copy, { recursive: true });
      return copy;
    };
    afterEach(() => rmSync(copy, { recursive: true, force: true }));

    it("fails when a landed migration's content changes, even by one byte", () => {
      const dir = fresh();
      appendFileSync(join(dir, "0000_init.sql"), " ");
      expect(landedMigrationProblems(dir)).toEqual([
        "0000_init.sql landed but its content changed; write a new migration instead of editing it",
      ]);
    });

    it("fails when a landed migration disappears", () => {
      const dir = fresh();
      rmSync(join(dir, "0001_manifest_index.sql"));
      expect(landedMigrationProblems(dir)).toEqual([
        "0001_manifest_index.sql landed but is gone; a landed migration is never removed",
      ]);
    });

    it("fails until a new migration is added to the manifest deliberately", () => {
      const dir = fresh();
      writeFileSync(join(dir, "9999_next.sql"), "SELECT 1;\n");
      expect(landedMigrationProblems(dir)).toEqual([
        `9999_next.sql is not in ${MANIFEST}; add it with: cd migrations && sha256sum 9999_next.sql >> ${MANIFEST}`,
      ]);
    });
  });
});
