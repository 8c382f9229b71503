import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compatibilityDate, compatibilityDateOf } from "../../scripts/compatibility-date.ts";

const root = join(import.meta.dirname, "..", "..");

describe("one compatibility date", () => {
  it("every Worker's wrangler.toml carries the top-level one", () => {
    const date = compatibilityDate(root);
    for (const config of ["workers/control/wrangler.toml", "workers/marketplace-sim/wrangler.toml"]) {
      expect({ config, date: compatibilityDateOf(join(root, config)) }).toEqual({ config, date });
    }
  });

  it("test and bench Workers read it instead of writing their own", () => {
    const bench = join(root, "scripts", "bench", "targets");
    const sources = [
      "vitest.config.ts",
      ...readdirSync(bench).map((file) => join("scripts", "bench", "targets", file)),
    ];
    for (const source of sources) {
      expect({ source, literal: /compatibilityDate:\s*["'`]/.test(readFileSync(join(root, source), "utf8")) }).toEqual({
        source,
        literal: false,
      });
    }
  });
});
