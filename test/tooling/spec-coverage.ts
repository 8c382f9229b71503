import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

// docs/spec-coverage.md: one table row per rule of the specification, each naming the tests that
// assert it as `file` "fragment of the test's name". What is wrong with it, against the tree at `root`.

const REFERENCE = /`(test\/[^`]+\.test\.ts)`\s*"([^"]+)"/g;

export function coverageProblems(document: string, root: string): string[] {
  const problems: string[] = [];
  const declared = /^Rows: (\d+)\.$/m.exec(document)?.[1];
  const rows = document
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| clause") && !/^\|\s*-/.test(line));
  if (declared === undefined) problems.push('no "Rows: N." line');
  else if (Number(declared) !== rows.length) problems.push(`"Rows: ${declared}." but the table has ${rows.length}`);
  for (const row of rows) {
    const cells = row.split(/(?<!\\)\|/).map((cell) => cell.trim());
    const [clause, rule, tests = ""] = cells.slice(1, -1);
    const name = `${clause} ${rule}`;
    if (/\b(partial|missing test|untested)\b/i.test(tests)) problems.push(`${name}: marked as not fully asserted`);
    const references = [...tests.matchAll(REFERENCE)];
    if (references.length === 0) problems.push(`${name}: names no test`);
    for (const [, file = "", fragment = ""] of references) {
      const path = join(root, file);
      if (!existsSync(path)) problems.push(`${name}: ${file} does not exist`);
      else if (!readFileSync(path, "utf8").includes(fragment)) problems.push(`${name}: ${file} has no "${fragment}"`);
    }
  }
  return problems;
}
