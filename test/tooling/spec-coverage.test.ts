import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coverageProblems } from "./spec-coverage.ts";

const root = join(import.meta.dirname, "..", "..");

describe("docs/spec-coverage.md: every rule of the specification is asserted by a test", () => {
  it("names, for every row, tests that exist, and counts its rows", () => {
    const document = readFileSync(join(root, "docs", "spec-coverage.md"), "utf8");
    expect(coverageProblems(document, root)).toEqual([]);
    expect(document).toMatch(/^Rows: (1[3-9]\d|[2-9]\d\d)\.$/m);
  });

  it("fails a row without a test, a test file that is gone, a name the file does not hold, and a wrong count", () => {
    const self = "test/tooling/spec-coverage.test.ts";
    // Joined here, so this file never holds the name it is checked for.
    const renamed = ["a name", "nobody gave"].join(" ");
    const document = [
      "Rows: 5.",
      "| clause | rule | asserted by |",
      "| ------ | ---- | ----------- |",
      `| 1.1 | asserted | \`${self}\` "names, for every row" |`,
      "| 1.2 | no test named | — |",
      '| 1.3 | gone | `test/tooling/no-such.test.ts` "anything" |',
      `| 1.4 | renamed | \`${self}\` "${renamed}" |`,
    ].join("\n");
    expect(coverageProblems(document, root)).toEqual([
      '"Rows: 5." but the table has 4',
      "1.2 no test named: names no test",
      "1.3 gone: test/tooling/no-such.test.ts does not exist",
      `1.4 renamed: ${self} has no "${renamed}"`,
    ]);
  });
});
