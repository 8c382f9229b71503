import { env, exports } from "cloudflare:workers";
import { PROBLEM_TYPE_BASE, PROBLEMS } from "@passport/domain";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../workers/resolver/src/app.ts";
import { aggregate, BASE, publish } from "./support/records.ts";
import { bodyArbitrary, headersArbitrary, methodArbitrary, pathArbitrary } from "./support/requests.ts";

let known: string[] = [];
let etags: string[] = [];

beforeAll(async () => {
  const records = await Promise.all(
    (["active", "suspended", "retired"] as const).map((lifecycle) => publish(aggregate({ passport: { lifecycle } }))),
  );
  known = records.map((r) => r.identity_id);
  etags = records.map((r) => `"${r.digest}"`);
});

/** Builds the request a client would send, or undefined when no client could send it. */
function requestFor(path: string, method: string, headers: Record<string, string>, body: string | undefined) {
  try {
    const hasBody = body !== undefined && method !== "GET" && method !== "HEAD";
    return new Request(`${BASE}${path}`, { method, headers, body: hasBody ? body : undefined, redirect: "manual" });
  } catch {
    return undefined;
  }
}

const STATUSES = new Set<number>(Object.values(PROBLEMS).map((p) => p.status));

async function expectWellFormed(request: Request, response: Response) {
  const { status } = response;
  expect(status, `${request.method} ${request.url}`).toBeGreaterThanOrEqual(200);
  expect(status, `${request.method} ${request.url}`).toBeLessThan(500);
  expect(response.headers.get("access-control-allow-origin")).toBe("*");
  // No answer may be sniffed into another type: a record or problem body read as HTML or script.
  expect(response.headers.get("x-content-type-options"), `${request.method} ${request.url}`).toBe("nosniff");
  const text = await response.text();
  if (request.method === "HEAD" || status === 204 || status === 304 || status === 303) {
    expect(text).toBe("");
    return;
  }
  if (status < 400) return;
  expect(STATUSES.has(status)).toBe(true);
  if (status === 405) expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  const type = response.headers.get("content-type");
  if (type === "application/problem+json") {
    const problem = JSON.parse(text) as { type: string; status: number; title: string };
    expect(problem.type.startsWith(PROBLEM_TYPE_BASE)).toBe(true);
    expect(problem.status).toBe(status);
    expect(typeof problem.title).toBe("string");
  } else {
    expect(type).toBe("text/html; charset=utf-8");
    expect(text).toContain(PROBLEM_TYPE_BASE);
  }
}

describe("arbitrary requests", () => {
  it("always get a well-formed 2xx, 3xx or 4xx answer, never a 5xx", async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constant(null).chain(() => pathArbitrary(known)),
        methodArbitrary,
        fc.constant(null).chain(() => headersArbitrary(etags)),
        bodyArbitrary.map((b) => (b === undefined || typeof b === "string" ? b : JSON.stringify(b))),
        async (path, method, headers, body) => {
          const request = requestFor(path, method, headers, body);
          fc.pre(request !== undefined);
          const response = await exports.default.fetch(request);
          seen.add(response.status);
          await expectWellFormed(request, response);
        },
      ),
      { numRuns: 2500 },
    );
    // The generator reaches every kind of answer (each dozens of times in 2,500 runs), so the
    // property is not vacuous.
    expect([...seen].sort()).toEqual(expect.arrayContaining([200, 204, 303, 304, 400, 404, 405]));
  }, 120_000);

  it("get the same answer from the hot path as from the Hono app", async () => {
    const headerNames = ["content-type", "etag", "cache-control", "cloudflare-cdn-cache-control", "cache-tag", "allow"];
    await fc.assert(
      fc.asyncProperty(
        fc.constant(null).chain(() => pathArbitrary(known)),
        fc.constantFrom("GET", "HEAD"),
        fc.constant(null).chain(() => headersArbitrary(etags)),
        async (path, method, headers) => {
          const direct = requestFor(path, method, headers, undefined);
          fc.pre(direct !== undefined);
          const viaEntry = await exports.default.fetch(direct.clone());
          const viaHono = await app.fetch(direct, env);
          expect(viaEntry.status, path).toBe(viaHono.status);
          for (const name of headerNames) expect(viaEntry.headers.get(name), name).toBe(viaHono.headers.get(name));
          expect(await viaEntry.text()).toBe(await viaHono.text());
        },
      ),
      { numRuns: 1500 },
    );
  }, 120_000);
});
