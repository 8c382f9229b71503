// The published @passport/verifier as consumers get it: `npm pack`'s tarball installed into a
// scratch project, then a real verify against the local service (`npm start`) in Node (ESM,
// CommonJS and the `passport` bin), Bun and Deno. Chromium: test/browser/verifier-package.test.ts.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RUNTIMES, runtime, scratchProject } from "../../verifier-package.ts";

const service = inject("service");
const exec = promisify(execFile);
let project: string;

beforeAll(() => {
  project = scratchProject();
});

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

function payments(): string {
  const found = service.demo.find((p) => p.name === "Demo Payments API");
  if (!found) throw new Error("the demo payments passport is missing from the start output");
  return found.id;
}

/** Runs a command in the scratch project with the resolver and passport in its environment. */
async function inProject(command: string, args: string[]): Promise<string> {
  const env = { ...process.env, PASSPORT_RESOLVER: service.resolver, PASSPORT_ID: payments() };
  const { stdout } = await exec(command, args, { cwd: project, env });
  return stdout;
}

const verified = { outcome: "ok", ok: true, signature: "verified" };

/**
 * Runs the consumer script in a runtime from .tools/runtimes/. A runtime that cannot be installed
 * fails the test, saying why: the package promises to run there, so a skip would let that promise
 * drop out of CI unnoticed.
 */
async function inRuntime(name: keyof typeof RUNTIMES, args: (file: string) => string[]) {
  const found = runtime(name);
  if ("unavailable" in found) throw new Error(found.unavailable);
  const result = JSON.parse(await inProject(found.bin, args("verify.mjs")));
  expect(result).toMatchObject(verified);
  expect(result.log).toMatch(/\S/);
}

describe("the packed @passport/verifier in a scratch project, against the local service", () => {
  it("Node, ESM: import verifies the demo passport with its signature checked, and /log parses the log key", async () => {
    const result = JSON.parse(await inProject(process.execPath, ["verify.mjs"]));
    expect(result).toMatchObject(verified);
    const key = (await (await fetch(`${service.resolver}/log/key`)).text()).trim();
    expect(key.startsWith(`${result.log}+`)).toBe(true);
  });

  it("Node, CommonJS: require gives the same verdict", async () => {
    expect(JSON.parse(await inProject(process.execPath, ["verify.cjs"]))).toMatchObject(verified);
  });

  it("the passport bin the package installs verifies (exit 0)", async () => {
    const bin = join(project, "node_modules", ".bin", "passport");
    const args = ["verify", payments(), "--jwks", `${service.resolver}/.well-known/jwks.json`];
    const stdout = await inProject(bin, [...args, "--resolver", service.resolver, "--family", "api"]);
    expect(stdout).toMatch(/^OK\s+ok\s+psp_/);
  });

  it(`Bun ${RUNTIMES.bun}`, async () => {
    await inRuntime("bun", (file) => [file]);
  });

  it(`Deno ${RUNTIMES.deno}`, async () => {
    const url = new URL(service.resolver);
    await inRuntime("deno", (file) => [
      "run",
      `--allow-net=${url.host}`,
      "--allow-env=PASSPORT_RESOLVER,PASSPORT_ID",
      "--allow-read=.",
      file,
    ]);
  });

  it("the package README's quick start runs as written, as installed: the SDK script says ok, the bin OK", async () => {
    const readme = readFileSync(join(project, "node_modules", "@passport", "verifier", "README.md"), "utf8");
    const script = quickStartBlock(readme, "verify.mjs", "js");
    const shell = quickStartBlock(readme, "shell", "sh");
    // Its own folder, so the scratch project's verify.mjs stays; the package resolves from the one above.
    const folder = join(project, "readme");
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "verify.mjs"), script);
    const env = { ...process.env, PASSPORT_RESOLVER: service.resolver, PASSPORT_ID: payments() };
    const { stdout } = await exec("bash", ["-euo", "pipefail", "-c", shell], { cwd: folder, env });
    expect(stdout).toMatch(/^ok proceed$/m);
    expect(stdout).toMatch(/^OK\s+ok\s+psp_/m);
  });
});

/** The fenced block after the README's `<!-- quick-start: name -->` marker, which must be of `language`. */
function quickStartBlock(readme: string, name: string, language: string): string {
  const marker = readme.indexOf(`<!-- quick-start: ${name} -->`);
  const block = /```(\w+)\n([\s\S]*?)```/.exec(readme.slice(marker));
  if (marker < 0 || !block || block[1] !== language) throw new Error(`the README has no ${language} block "${name}"`);
  return block[2] as string;
}
