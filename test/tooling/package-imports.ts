import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { cyclesOf } from "./import-graph.ts";

/**
 * The import graph of the shared packages (packages/*): every source file, with an edge for each
 * import of another file, by relative path or through a workspace package's name and exports
 * (`@passport/protocol`, `@passport/verifier/log`). Type-only imports count: a circle of types is
 * still a circle a reader has to hold in mind, and it is where a runtime one starts.
 */
const SOURCE = /\.(ts|tsx|js|mjs)$/;
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g;
/** Comments, whose `@example` imports are not imports (a `//` after a colon is a URL's). */
const COMMENT = /\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name === "dist") return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** `@passport/<name>[/subpath]` -> the file its workspace exports name, for each package under `root`. */
function packageEntries(root: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const dir of readdirSync(root)) {
    const manifestPath = join(root, dir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { name: string; exports?: unknown };
    const exports = typeof manifest.exports === "string" ? { ".": manifest.exports } : (manifest.exports ?? {});
    for (const [subpath, target] of Object.entries(exports as Record<string, unknown>)) {
      if (typeof target !== "string") continue;
      const specifier = subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
      entries.set(specifier, resolve(root, dir, target));
    }
  }
  return entries;
}

export interface ImportGraph {
  /** Each file (relative to the packages folder) and the files it imports. */
  edges: Map<string, Set<string>>;
  /** Import circles between files, each as its sorted file names. */
  cycles: string[][];
}

/** Reads the imports of every source file under `root` (a folder of packages). */
export function packageImports(root: string): ImportGraph {
  const entries = packageEntries(root);
  const edges = new Map<string, Set<string>>();
  for (const path of sourceFiles(root)) {
    const from = relative(root, path);
    const targets = new Set<string>();
    for (const [, specifier] of readFileSync(path, "utf8").replace(COMMENT, "$1").matchAll(IMPORT)) {
      if (!specifier) continue;
      const target = specifier.startsWith(".") ? resolve(dirname(path), specifier) : entries.get(specifier);
      if (target && existsSync(target)) targets.add(relative(root, target));
    }
    edges.set(from, targets);
  }
  return { edges, cycles: cyclesOf(edges) };
}
