import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** `sha256sum` format, so `cd migrations && sha256sum -c landed.sha256` checks it too. */
export const MANIFEST = "landed.sha256";

/**
 * What is wrong with a migrations folder against its manifest of landed migrations: a listed file
 * changed or disappeared, or a migration file (or journal entry) is not listed yet.
 */
export function landedMigrationProblems(dir: string): string[] {
  const problems: string[] = [];
  const landed = new Map<string, string>();
  for (const line of readFileSync(join(dir, MANIFEST), "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const match = /^([0-9a-f]{64}) {2}(\S+\.sql)$/.exec(line);
    if (!match) {
      problems.push(`${MANIFEST}: unreadable line "${line}"`);
      continue;
    }
    landed.set(match[2] as string, match[1] as string);
  }
  for (const [file, digest] of landed) {
    const path = join(dir, file);
    if (!existsSync(path)) {
      problems.push(`${file} landed but is gone; a landed migration is never removed`);
    } else if (createHash("sha256").update(readFileSync(path)).digest("hex") !== digest) {
      problems.push(`${file} landed but its content changed; write a new migration instead of editing it`);
    }
  }
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".sql"))) {
    if (!landed.has(file)) {
      problems.push(`${file} is not in ${MANIFEST}; add it with: cd migrations && sha256sum ${file} >> ${MANIFEST}`);
    }
  }
  // The shards' folder is drizzle-kit's, with its journal; the directory's is written by hand.
  const journalFile = join(dir, "meta", "_journal.json");
  if (!existsSync(journalFile)) return problems;
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as {
    entries: { tag: string }[];
  };
  for (const { tag } of journal.entries) {
    if (!landed.has(`${tag}.sql`)) problems.push(`meta/_journal.json names ${tag}, which is not in ${MANIFEST}`);
  }
  return problems;
}
