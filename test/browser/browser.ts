// Debian's Chromium driven by playwright-core (no downloaded browsers), headless, with a fresh
// profile per launch.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { root } from "../local-service.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
// Test runs write to the ignored test-results/screenshots/; `npm run screenshots` sets
// PASSPORT_SCREENSHOTS to docs/screenshots to refresh the committed ones on purpose.
const screenshots = resolve(root, process.env.PASSPORT_SCREENSHOTS ?? join("test-results", "screenshots"));

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Each test file's browser is a client machine of its own: its requests leave from an address of
 * their own in 127.0.0.0/8, through a forward proxy bound to it. The local service keys the
 * per-client limits on the connecting address, as the edge does (docs/limits.md), and one
 * address for the whole suite would sign in more often in a minute than SIGN_IN_PER_CLIENT lets
 * any one client.
 */
async function clientMachine(): Promise<{ proxy: string; close: () => Promise<void> }> {
  const address = `127.${1 + Math.floor(Math.random() * 254)}.${Math.floor(Math.random() * 256)}.${2 + Math.floor(Math.random() * 253)}`;
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? "/");
    const { "proxy-connection": _hop, ...headers } = req.headers;
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: req.method,
        headers,
        localAddress: address,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    outgoing.on("error", () => res.destroy());
    req.pipe(outgoing);
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    proxy: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function launch(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "passport-chromium-"));
  const machine = await clientMachine();
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    // `<-loopback>`: Chromium otherwise never sends loopback requests through a proxy.
    args: [...FLAGS, `--proxy-server=${machine.proxy}`, "--proxy-bypass-list=<-loopback>"],
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      await machine.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot as {name}.png in the screenshots folder. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

/** A development token, made exactly as `npm run token -- --sub ... --role ...` makes it. */
export async function developmentToken(subject: string, role: string, organisation = "org_demo"): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["scripts/token.mjs", "--sub", subject, "--role", role, "--org", organisation],
    { cwd: root },
  );
  return stdout.trim();
}

/**
 * The lifecycle every browser test file uses: one browser for the file, and for each test a fresh
 * page with no cookies, handed to `use` and closed afterwards. Returns the file's browser.
 */
export function pagePerTest(use: (page: Page) => void): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    if (!browser) throw new Error("the browser did not start");
    await browser.context.clearCookies();
    const page = await browser.context.newPage();
    use(page);
    return () => page.close();
  });
  return () => {
    if (!browser) throw new Error("the browser did not start");
    return browser;
  };
}

/** Calls the control plane's /v1 API with `token`; a non-2xx answer fails the test with its body. */
export async function callControl<T>(
  control: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${control}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as T;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * How long the local service may serve a superseded record after a change: the edge lifetime of a
 * record (`E` = 30 s; KV is consistent on one machine) plus the purge keeper's routine delay
 * (at most 15 s), docs/freshness.md.
 */
const LOCAL_FRESHNESS_BOUND_MS = 45_000;

/**
 * A passport's public record as the resolver serves it once it has caught up with the control
 * plane: the record version the Dashboard API names as current is re-resolved until the resolver
 * (behind the platform model's edge cache, as `npm start` runs it) serves it, as docs/freshness.md
 * tells a re-checker to. Fails the test past the local freshness bound.
 */
export async function currentRecord<T extends { record_version: number }>(
  service: { control: string; resolver: string; token: string },
  id: string,
  token = service.token,
): Promise<T> {
  const { record_version: expected } = await callControl<{ record_version: number }>(
    service.control,
    token,
    "GET",
    `/v1/passports/${id}`,
  );
  const deadline = Date.now() + LOCAL_FRESHNESS_BOUND_MS;
  for (;;) {
    const response = await fetch(`${service.resolver}/api/p/${id}.json`);
    if (response.status !== 200) throw new Error(`the resolver answered ${response.status} for ${id}`);
    const record = (await response.json()) as T;
    if (record.record_version >= expected) return record;
    if (Date.now() > deadline) {
      throw new Error(`the resolver still serves version ${record.record_version} of ${id}, not ${expected}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
