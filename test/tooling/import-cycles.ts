import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g;

function sourceFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path, base);
    return /\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [relative(base, path)] : [];
  });
}

/**
 * Import cycles between the files under `src` (type-only imports count: a type in the wrong file
 * is what makes most of them), each as the files of one strongly connected group, sorted.
 */
export function importCycles(src: string): string[][] {
  const files = sourceFiles(src).sort();
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const [, specifier] of readFileSync(join(src, file), "utf8").matchAll(IMPORT)) {
      if (!specifier?.startsWith(".")) continue;
      const target = relative(src, resolve(dirname(join(src, file)), specifier));
      if (files.includes(target)) targets.push(target);
    }
    edges.set(file, targets);
  }
  // Tarjan's strongly connected components: each group of two or more files is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
      }
    }
    if (low.get(file) === index.get(file)) {
      const group: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        group.push(member);
      } while (member !== file);
      if (group.length > 1 || edges.get(file)?.includes(file)) groups.push(group.sort());
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return groups.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}
