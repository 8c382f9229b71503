// The packed @passport/verifier as a consumer installs it (docs/verifier-package.md): the tarball
// `npm pack` makes (scripts/verifier-package.mjs), installed into a scratch project in a temp
// dir, never in the tree; and the other runtimes that run it, Bun and Deno, installed from the npm
// registry into the git-ignored .tools/runtimes/ and kept there.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "./local-service.ts";

const packageDir = join(root, "packages", "verifier");
const packed = join(root, ".tools", "verifier-package", "npm");
const runtimesDir = join(root, ".tools", "runtimes");
/** The runtimes the scratch checks run besides Node, at exact versions so every machine runs the same. */
export const RUNTIMES = { bun: "1.4.5", deno: "2.9.6" } as const;

function newestChange(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestChange(join(path, name))));
}

function tarballIn(dir: string): string | undefined {
  const name = existsSync(dir) ? readdirSync(dir).find((file) => file.endsWith(".tgz")) : undefined;
  return name ? join(dir, name) : undefined;
}

/** The tarball of packages/verifier; packed again (npm pack) when it is missing or older than the package. */
function verifierTarball(): string {
  const existing = tarballIn(packed);
  const sources = ["src", "package.json", "README.md", "LICENSE", "CHANGELOG.md", "scripts", "tsconfig.build.json"];
  const newest = Math.max(...sources.map((path) => newestChange(join(packageDir, path))));
  if (!existing || statSync(existing).mtimeMs < newest) {
    execFileSync(process.execPath, ["scripts/verifier-package.mjs", "--pack"], { cwd: root, stdio: "inherit" });
  }
  const tarball = tarballIn(packed);
  if (!tarball) throw new Error("npm pack made no tarball of packages/verifier");
  return tarball;
}

/**
 * What a consumer writes: verify the demo API passport against the local resolver with its keys,
 * and read the log's key through the `/log` face. Prints the result as JSON. Written as ESM and
 * as CommonJS; `node:process` is there in Node, Bun and Deno.
 */
const consumer = (load: string) => `${load}
const resolver = process.env.PASSPORT_RESOLVER;
const verifier = new Verifier({ resolver, jwks: resolver + "/.well-known/jwks.json" });
const result = await verifier.verify(process.env.PASSPORT_ID, { family: "api", organisation: "org_demo", environment: "production" });
const logKey = await parseVerifierKey((await (await fetch(resolver + "/log/key")).text()).trim());
console.log(JSON.stringify({ outcome: result.outcome, ok: result.ok, signature: result.proof?.signature, log: logKey.name }));
`;

/** A scratch project in a fresh temp dir with the tarball installed and the consumer scripts beside it. */
export function scratchProject(): string {
  const tarball = verifierTarball();
  const dir = mkdtempSync(join(tmpdir(), "passport-verifier-consumer-"));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ private: true, type: "module" })}\n`);
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefer-offline", tarball], {
    cwd: dir,
    stdio: ["ignore", "ignore", "inherit"],
  });
  writeFileSync(
    join(dir, "verify.mjs"),
    consumer(
      'import process from "node:process";\nimport { Verifier } from "@passport/verifier";\nimport { parseVerifierKey } from "@passport/verifier/log";',
    ),
  );
  writeFileSync(
    join(dir, "verify.cjs"),
    `const process = require("node:process");
const { Verifier } = require("@passport/verifier");
const { parseVerifierKey } = require("@passport/verifier/log");
(async () => {${consumer("")}})();
`,
  );
  return dir;
}

/** The path of a runtime's binary, installed into .tools/runtimes/ when missing, or why it cannot be had. */
export function runtime(name: keyof typeof RUNTIMES): { bin: string } | { unavailable: string } {
  const bin = join(runtimesDir, "node_modules", ".bin", name);
  const version = () => spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout ?? "";
  if (existsSync(bin) && version().includes(RUNTIMES[name])) return { bin };
  mkdirSync(runtimesDir, { recursive: true });
  if (!existsSync(join(runtimesDir, "package.json"))) writeFileSync(join(runtimesDir, "package.json"), "{}\n");
  const wanted = Object.entries(RUNTIMES).map(([runtimeName, v]) => `${runtimeName}@${v}`);
  const install = spawnSync(
    "npm",
    ["install", "--prefix", runtimesDir, "--no-audit", "--no-fund", "--loglevel=error", ...wanted],
    { encoding: "utf8" },
  );
  if (install.status === 0 && existsSync(bin) && version().includes(RUNTIMES[name])) return { bin };
  return {
    unavailable: `${name}@${RUNTIMES[name]} could not be installed from the npm registry: ${install.stderr.trim()}`,
  };
}
