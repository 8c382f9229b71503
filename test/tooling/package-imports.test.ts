import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { packageImports } from "./package-imports.ts";

const packages = join(import.meta.dirname, "..", "..", "packages");

describe("the shared packages' imports (packages/)", () => {
  const graph = packageImports(packages);

  it("no files import each other, directly or around a loop, across all packages", () => {
    expect(graph.cycles).toEqual([]);
  });

  it("follows imports between packages by name, and the protocol imports no other package", () => {
    expect(graph.edges.get("domain/src/record.ts")).toContain("protocol/src/index.ts");
    expect(graph.edges.get("verifier/src/log/format.ts")).toContain("protocol/src/index.ts");
    const outward = [...graph.edges]
      .filter(([from]) => from.startsWith("protocol/"))
      .flatMap(([from, to]) =>
        [...to].filter((file) => !file.startsWith("protocol/")).map((file) => `${from} -> ${file}`),
      );
    expect(outward).toEqual([]);
    const domainToVerifier = [...graph.edges]
      .filter(([from]) => from.startsWith("domain/"))
      .flatMap(([from, to]) =>
        [...to].filter((file) => file.startsWith("verifier/")).map((file) => `${from} -> ${file}`),
      );
    expect(domainToVerifier).toEqual([]);
  });

  describe("the check itself, on a small tree", () => {
    let dir = "";
    const tree = (files: Record<string, string>) => {
      dir = mkdtempSync(join(tmpdir(), "package-imports-"));
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      return packageImports(dir);
    };
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it("finds a circle across two packages, through a package name and a type-only import", () => {
      const found = tree({
        "low/package.json": JSON.stringify({ name: "@x/low", exports: { ".": "./src/index.ts" } }),
        "low/src/index.ts": 'export { a } from "./a.ts";',
        "low/src/a.ts": 'import type { B } from "../../high/src/b.ts";\nexport const a = 1;',
        "high/package.json": JSON.stringify({ name: "@x/high", exports: { ".": "./src/b.ts" } }),
        "high/src/b.ts": 'import { a } from "@x/low";\nexport type B = typeof a;',
        "high/src/c.ts": 'import { a } from "@x/low";',
      });
      expect(found.cycles).toEqual([["high/src/b.ts", "low/src/a.ts", "low/src/index.ts"]]);
    });

    it("finds a file that imports itself, and ignores imports written in comments", () => {
      const found = tree({
        "one/package.json": JSON.stringify({
          name: "@x/one",
          exports: { ".": "./src/one.ts", "./sub": "./src/sub.ts" },
        }),
        "one/src/one.ts":
          '/**\n * @example\n * import { sub } from "@x/one/sub";\n */\nimport { one } from "./one.ts";',
        "one/src/sub.ts":
          '// import { one } from "./one.ts";\nimport { sub } from "@x/one/sub";\nconst url = "https://x.example//y";',
      });
      expect(found.cycles).toEqual([["one/src/one.ts"], ["one/src/sub.ts"]]);
    });
  });
});
