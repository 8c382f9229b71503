import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

/** Every version of `name` the lockfile installs (its `packages:` keys). */
function lockedVersions(name: string): string[] {
  const lockfile = readFileSync(join(root, "pnpm-lock.yaml"), "utf8");
  const packages = lockfile.slice(lockfile.indexOf("\npackages:\n"), lockfile.indexOf("\nsnapshots:\n"));
  const key = new RegExp(`^ {2}'?${name.replace("/", "\\/")}@([^':(]+)'?:$`, "gm");
  return [...packages.matchAll(key)].map((match) => match[1] as string);
}

describe("one workerd for tests, npm start and deploy", () => {
  it("the lockfile holds one workerd, one wrangler, one miniflare and one zod", () => {
    for (const name of ["workerd", "wrangler", "miniflare", "zod"]) {
      expect({ name, versions: lockedVersions(name) }).toEqual({ name, versions: [expect.any(String)] });
    }
  });

  it("that wrangler and miniflare are the ones package.json names", () => {
    const { devDependencies } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(lockedVersions("wrangler")).toEqual([devDependencies.wrangler]);
    expect(lockedVersions("miniflare")).toEqual([devDependencies.miniflare]);
  });
});
