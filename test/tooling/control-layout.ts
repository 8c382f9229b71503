import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { cyclesOf } from "./import-graph.ts";

/**
 * The adapter wings of workers/control/src (docs/control-layout.md): each owns its routes, rules,
 * queries and limits in its folder, and the rest of the code reaches it only through its face,
 * `<wing>/index.ts`.
 */
const WINGS = ["marketplace", "publication", "binding-checks", "notifications"] as const;

/**
 * Arrows the core never draws (docs/control-layout.md): the rules in `changes/` know no HTTP, so
 * they import neither the HTTP vocabulary (`api/`) nor the routes that answer with it, nor the
 * Dashboard. A route may use `api/` and `changes/`; `api/` may use `changes/` (its request
 * schemas are the changes' own).
 */
const FORBIDDEN: Record<string, readonly string[]> = { changes: ["api", "routes", "ui"] };

/** Where drizzle queries may be written: the core's `db/` and each wing's query module. */
function mayQuery(file: string): boolean {
  if (file.startsWith("db/")) return true;
  return WINGS.some((wing) => file === `${wing}/queries.ts` || file.startsWith(`${wing}/queries/`));
}

/** A file's folder: the first path segment under src (a file at the top is its own folder). */
function folderOf(file: string): string {
  return file.split("/")[0] as string;
}

function sourceFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path, base);
    return /\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [relative(base, path)] : [];
  });
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g;
/**
 * A query call on a drizzle database (`db.select(`, `tx.insert(`, `database(env.DB).batch(`,
 * `db.query.passports.findFirst(` ... also chained over lines) or a `sql` template: what docs/control-layout.md keeps in the query modules.
 */
const QUERY =
  /\b(?:db|tx|database\([^)]*\))\s*\.\s*(?:(?:select|selectDistinct|insert|update|delete|batch|run|all|get|values)\s*\(|query\s*\.)|\bsql`/g;

export interface Layout {
  /** `from -> to` for each pair of folders one imports the other. */
  edges: Map<string, Set<string>>;
  /** Import cycles between folders, each as its sorted folder names. */
  cycles: string[][];
  /** Imports from db/ into another folder: `db/file.ts -> folder/file.ts`. */
  dbImports: string[];
  /** Imports of a wing's internals from outside the wing: `file -> wing/file.ts`. */
  wingInternals: string[];
  /** Drizzle calls outside db/ and wing query modules: `file:line`. */
  strayQueries: string[];
  /** Imports along an arrow the core never draws (`FORBIDDEN`): `file -> folder/file.ts`. */
  forbiddenImports: string[];
}

/** Reads the imports and query calls of every source file under `src`. */
export function controlLayout(src: string): Layout {
  const files = sourceFiles(src).sort();
  const edges = new Map<string, Set<string>>();
  const dbImports: string[] = [];
  const wingInternals: string[] = [];
  const strayQueries: string[] = [];
  const forbiddenImports: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(src, file), "utf8");
    const from = folderOf(file);
    for (const [, specifier] of text.matchAll(IMPORT)) {
      if (!specifier?.startsWith(".")) continue;
      const target = relative(src, resolve(dirname(join(src, file)), specifier));
      if (target.startsWith("..")) continue;
      const to = folderOf(target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)?.add(to);
      if (from === "db") dbImports.push(`${file} -> ${target}`);
      if (FORBIDDEN[from]?.includes(to)) forbiddenImports.push(`${file} -> ${target}`);
      if ((WINGS as readonly string[]).includes(to) && target !== `${to}/index.ts`) {
        wingInternals.push(`${file} -> ${target}`);
      }
    }
    if (!mayQuery(file)) {
      for (const match of text.matchAll(QUERY)) {
        const line = text.slice(0, match.index).split("\n").length;
        strayQueries.push(`${file}:${line}`);
      }
    }
  }
  return { edges, cycles: cyclesOf(edges), dbImports, wingInternals, strayQueries, forbiddenImports };
}
