import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { importCycles } from "./import-cycles.ts";

const src = join(import.meta.dirname, "..", "..", "packages", "verifier", "src");

describe("the verifier's modules (docs/verifier.md, Layout)", () => {
  it("no file imports one that imports it back, directly or around a loop", () => {
    expect(importCycles(src)).toEqual([]);
  });

  describe("the check itself, on a small tree", () => {
    let dir = "";
    const tree = (files: Record<string, string>) => {
      dir = mkdtempSync(join(tmpdir(), "import-cycles-"));
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      return importCycles(dir);
    };
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it("finds a loop through a type-only import and a folder, and leaves a one-way chain alone", () => {
      const found = tree({
        "decide.ts": 'import { receipt } from "./receipt.ts";',
        "receipt.ts": 'import type { Verifier } from "./verifier.ts";\nexport const receipt = 1;',
        "verifier.ts": 'import { decide } from "./decide.ts";\nimport { check } from "./log/check.ts";',
        "log/check.ts": 'import { entry } from "./entry.ts";\nexport const check = 1;',
        "log/entry.ts": "export const entry = 1;",
      });
      expect(found).toEqual([["decide.ts", "receipt.ts", "verifier.ts"]]);
    });

    it("finds none when the type sits where it is produced", () => {
      const found = tree({
        "decide.ts": 'import { receipt } from "./receipt.ts";',
        "receipt.ts": "export const receipt = 1;",
        "verifier.ts": 'import { decide } from "./decide.ts";',
      });
      expect(found).toEqual([]);
    });
  });
});
