// The published @passport/verifier in Chromium, as a page without a bundler loads it: the ESM
// build from `npm pack`'s tarball (installed into a scratch project), mapped to its name by an
// import map, verifying a passport against the local resolver from another origin (CORS).

import { once } from "node:events";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, normalize } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { scratchProject } from "../verifier-package.ts";
import { pagePerTest } from "./browser.ts";

const service = inject("service");
let page: Page;
pagePerTest((fresh) => {
  page = fresh;
});
let project: string;
let server: Server | undefined;

beforeAll(() => {
  project = scratchProject();
});

afterAll(() => {
  server?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

/** A consumer's page: its module imports the package by name, through the import map. */
const PAGE = `<!doctype html>
<script type="importmap">
{ "imports": { "@passport/verifier": "/pkg/dist/index.js", "@passport/verifier/log": "/pkg/dist/log/format.js" } }
</script>
<script type="module">
import { Verifier } from "@passport/verifier";
import { parseVerifierKey } from "@passport/verifier/log";
window.verifyPassport = async (resolver, id) => {
  const verifier = new Verifier({ resolver, jwks: resolver + "/.well-known/jwks.json" });
  const verdict = await verifier.verify(id, { family: "api", organisation: "org_demo", environment: "production" });
  const logKey = await parseVerifierKey((await (await fetch(resolver + "/log/key")).text()).trim());
  return { outcome: verdict.outcome, ok: verdict.ok, signature: verdict.proof?.signature, log: logKey.name };
};
</script>
<title>consumer</title>`;

interface ConsumerWindow {
  verifyPassport?: (resolver: string, id: string) => Promise<Record<string, unknown>>;
}

/**
 * Serves the page and the installed package from an origin of its own on loopback: a secure
 * context (WebCrypto), and one Chromium lets reach the loopback resolver.
 */
async function consumerOrigin(): Promise<string> {
  const installed = join(project, "node_modules", "@passport", "verifier");
  server = createServer((request, response) => {
    const { pathname } = new URL(request.url ?? "/", "http://consumer");
    if (pathname === "/") return response.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    const file = normalize(join(installed, pathname.replace(/^\/pkg\//, "/")));
    const inside = pathname.startsWith("/pkg/") && file.startsWith(installed) && existsSync(file);
    if (!inside || !statSync(file).isFile()) return response.writeHead(404).end();
    response.writeHead(200, { "content-type": "text/javascript" }).end(readFileSync(file));
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the packed @passport/verifier in Chromium", () => {
  it("verifies the demo API passport from another origin, its signature checked against the pinned keys", async () => {
    const id = service.demo.find((p) => p.name === "Demo Payments API")?.id;
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${await consumerOrigin()}/`);
    await page
      .waitForFunction(() => typeof (window as ConsumerWindow).verifyPassport === "function", undefined, {
        timeout: 10_000,
      })
      .catch(() => expect.fail(`the page did not load the package: ${errors.join("; ")}`));
    const result = await page.evaluate(
      // An error is returned as text: its stack names the page's URLs, which are no files here.
      ([resolver, passport]) =>
        (window as ConsumerWindow)
          .verifyPassport?.(resolver, passport)
          .catch((error: Error): Record<string, unknown> => ({ error: `${error}` })),
      [service.resolver, id as string] as const,
    );
    expect(result).toMatchObject({ outcome: "ok", ok: true, signature: "verified" });
    expect(result?.log).toMatch(/\S/);
  });
});
