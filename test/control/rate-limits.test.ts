import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import { Caller } from "../support/api.ts";

/**
 * Rate limits through the real local Rate Limiting binding, with the values of
 * workers/control/wrangler.toml (docs/limits.md). The binding's windows follow the wall clock, so
 * a run that straddles a window boundary is allowed up to twice the limit before it is refused.
 */

/** A client address nobody else in the run uses (the IPv6 documentation prefix, RFC 3849). */
function freshAddress(): string {
  const [a = 0, b = 0] = crypto.getRandomValues(new Uint16Array(2));
  return `2001:db8::${a.toString(16)}:${b.toString(16)}`;
}

/** Sends until the first 429 and returns it with the number of requests let through before it. */
async function untilRefused(limit: number, send: () => Promise<Response>) {
  for (let accepted = 0; accepted <= 2 * limit; accepted++) {
    const response = await send();
    if (response.status === 429) return { response, accepted };
    await response.body?.cancel();
  }
  throw new Error(`no 429 after ${2 * limit + 1} requests`);
}

async function expectRateLimited(response: Response) {
  expect(response.status).toBe(429);
  expect(response.headers.get("retry-after")).toBe("60");
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const body = await response.json<Record<string, unknown>>();
  expect(body).toMatchObject({ type: "urn:svc:passport:problem:rate-limited", status: 429 });
  expect(JSON.stringify(body)).not.toMatch(/client:|subject:|FULFILL|WRITES|CLAIMS|CHECKS|SIGN_IN|EVENTS|PUBLIC_READS/);
}

function post(path: string, address: string, init: { headers?: Record<string, string>; body?: BodyInit } = {}) {
  return exports.default.fetch(`http://control.test${path}`, {
    method: "POST",
    headers: { "cf-connecting-ip": address, accept: "application/json", ...init.headers },
    body: init.body ?? new URLSearchParams(),
    redirect: "manual",
  });
}

describe("POST /marketplace/fulfill", () => {
  it("refuses a client after 10 posts a minute, while another client still gets through", async () => {
    const address = freshAddress();
    const { response, accepted } = await untilRefused(10, () => post("/marketplace/fulfill", address));
    expect(accepted).toBeGreaterThanOrEqual(10);
    await expectRateLimited(response);

    // Another buyer is not affected: its post reaches the route (400: no token in the form).
    const other = await post("/marketplace/fulfill", freshAddress());
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ type: "urn:svc:passport:problem:invalid-registration-token" });
  });
});

describe("POST /marketplace/fulfill from the buyer's browser", () => {
  it("answers a refused browser with the set-up page: stage, time, wait and retry", async () => {
    const address = freshAddress();
    const send = () =>
      post("/marketplace/fulfill", address, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
    const { response, accepted } = await untilRefused(10, send);
    expect(accepted).toBeGreaterThanOrEqual(10);
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("60");
    expect(response.headers.get("content-type")).toContain("text/html");
    const page = await response.text();
    expect(page).toContain("Set-up could not start");
    expect(page).toContain("Wait 60 seconds");
    expect(page).toContain("registration_token_handoff");
    expect(page).not.toMatch(/client:|FULFILL/);
  });
});

describe("the fulfill ceiling", () => {
  it("refuses every client once all clients together reach it", async () => {
    // The control plane's own app over a real limiter binding; only the ceiling's size is the test's.
    const testEnv = { ...env, FULFILL_CEILING: env.TEST_FULFILL_CEILING };
    const sendFrom = (address: string) =>
      app.request(
        "http://control.test/marketplace/fulfill",
        {
          method: "POST",
          headers: { "cf-connecting-ip": address, accept: "application/json" },
          body: new URLSearchParams(),
        },
        testEnv,
      );

    let admitted = 0;
    let refusal: Response | undefined;
    for (let client = 0; client < 12 && !refusal; client++) {
      const response = await sendFrom(freshAddress());
      if (response.status === 429) refusal = response;
      else admitted++;
    }
    // Five a window; a run straddling a window boundary may admit up to twice that.
    expect(admitted).toBeGreaterThanOrEqual(5);
    expect(admitted).toBeLessThanOrEqual(10);
    if (!refusal) throw new Error("the ceiling never refused");
    await expectRateLimited(refusal);
    // A client that has sent nothing yet is refused too: the ceiling counts everyone.
    await expectRateLimited(await sendFrom(freshAddress()));
  });
});

describe("POST /marketplace/events", () => {
  it("refuses a client after 120 posts a minute, before the secret is checked", async () => {
    const address = freshAddress();
    const send = () => post("/marketplace/events", address, { headers: { authorization: "Bearer guess" }, body: "{}" });
    const { response, accepted } = await untilRefused(120, send);
    expect(accepted).toBeGreaterThanOrEqual(120);
    await expectRateLimited(response);
    expect((await post("/marketplace/events", freshAddress(), { body: "{}" })).status).toBe(401);
  });
});

describe("the Dashboard's sign-in", () => {
  it("refuses a client after 10 sign-in posts a minute", async () => {
    const address = freshAddress();
    const send = () =>
      post("/dashboard/sign-in", address, {
        headers: { origin: "http://control.test" },
        body: new URLSearchParams({ token: "not-a-token" }),
      });
    const { response, accepted } = await untilRefused(10, send);
    expect(accepted).toBeGreaterThanOrEqual(10);
    await expectRateLimited(response);
  });
});

describe("writes under /v1", () => {
  it("refuses a subject after 120 writes a minute, but not its reads, nor another subject's writes", async () => {
    const caller = await Caller.create("owner");
    const { response, accepted } = await untilRefused(120, () => caller.request("POST", "/v1/passports", {}));
    expect(accepted).toBeGreaterThanOrEqual(120);
    await expectRateLimited(response);

    expect((await caller.request("GET", "/v1/me")).status).toBe(200);
    const other = await Caller.create("owner");
    expect((await other.createPassport()).identity_id).toMatch(/^psp_/);
  });

  it("refuses a subject after 10 claims a minute", async () => {
    const caller = await Caller.create("owner");
    const claim = () =>
      caller.request("POST", "/v1/acquisitions/acq_nonexistent/claim", { claim_reference: "clm_wrong" });
    const first = await claim();
    expect(first.status).not.toBe(429);
    await first.body?.cancel();
    const { response, accepted } = await untilRefused(10, claim);
    expect(accepted + 1).toBeGreaterThanOrEqual(10);
    await expectRateLimited(response);
  });
});

describe("POST /v1/passports/{id}/bindings/{bindingId}/verify", () => {
  it("refuses a subject after 30 binding checks a minute, while another subject still gets through", async () => {
    const caller = await Caller.create("editor");
    // An owner or admin creates the API passport (docs/api-passports.md); the editor checks it.
    const admin = await Caller.create("admin", caller.organisation);
    const passport = await admin.createPassport({ bindings: [{ class: "gateway", value: "gw-unprovable" }] });
    const path = `/v1/passports/${passport.identity_id}/bindings/${passport.bindings[0].id}/verify`;
    const { response, accepted } = await untilRefused(30, () => caller.request("POST", path));
    expect(accepted).toBeGreaterThanOrEqual(30);
    await expectRateLimited(response);
    const colleague = await Caller.create("editor", caller.organisation);
    expect((await colleague.request("POST", path)).status).toBe(200);
  });
});

describe("GET /public/passports/{id}/declared-by", () => {
  it("refuses a client after 120 public counts a minute, while another client still gets through", async () => {
    const owner = await Caller.create("owner");
    const passport = await owner.createPassport({ display_name: "Counted API" });
    const path = `http://control.test/public/passports/${passport.identity_id}/declared-by`;
    const get = (address: string) => exports.default.fetch(path, { headers: { "cf-connecting-ip": address } });
    const address = freshAddress();
    const { response, accepted } = await untilRefused(120, () => get(address));
    expect(accepted).toBeGreaterThanOrEqual(120);
    await expectRateLimited(response);
    expect((await get(freshAddress())).status).toBe(200);
  });
});
