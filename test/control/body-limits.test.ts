import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Caller } from "../support/api.ts";

const FULL_SIZE = 3 * 1024 * 1024;
const CHUNK = 16 * 1024;

/**
 * A 3 MiB chunked body (no Content-Length) that produces each 16 KiB chunk only when the reader
 * asks for it, and counts what was asked for: how much of the body the Worker actually read.
 */
function streamedBody(byte = 0x61) {
  let produced = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (produced >= FULL_SIZE) return controller.close();
        controller.enqueue(new Uint8Array(CHUNK).fill(byte));
        produced += CHUNK;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, produced: () => produced };
}

async function send(path: string, headers: Record<string, string>) {
  const { body, produced } = streamedBody();
  const response = await exports.default.fetch(`http://control.test${path}`, {
    method: "POST",
    headers: { "cf-connecting-ip": `198.51.100.${Math.floor(Math.random() * 250)}`, ...headers },
    body,
    redirect: "manual",
  });
  expect(response.headers.get("content-length"), "sent chunked").toBeNull();
  return { response, produced: produced() };
}

describe("streamed oversize bodies", () => {
  it("a /v1 write answers 413 after reading about its limit, not the whole body", async () => {
    const owner = await Caller.create("owner");
    const { response, produced } = await send("/v1/passports", {
      authorization: `Bearer ${owner.token}`,
      "content-type": "application/json",
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ type: "urn:svc:passport:problem:payload-too-large" });
    expect(produced).toBeLessThan(256 * 1024);
  });

  it("the set-up form post answers 413 with the buyer's page after reading about its limit", async () => {
    const { response, produced } = await send("/marketplace/fulfill", {
      "content-type": "application/x-www-form-urlencoded",
      accept: "text/html",
    });
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(await response.text()).toContain("larger than a registration token can be");
    expect(produced).toBeLessThan(128 * 1024);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM acquisitions WHERE created_at > ?")
      .bind(new Date(Date.now() - 1000).toISOString())
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);
  });

  it("a marketplace event answers 413 after reading about its limit, and only for the relay", async () => {
    const { response, produced } = await send("/marketplace/events", {
      authorization: `Bearer ${env.MARKETPLACE_EVENTS_SECRET}`,
      "content-type": "application/json",
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ type: "urn:svc:passport:problem:payload-too-large" });
    expect(produced).toBeLessThan(512 * 1024);

    const anonymous = await send("/marketplace/events", { "content-type": "application/json" });
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.produced).toBeLessThan(64 * 1024);
  });

  it("a Dashboard form post answers 413 after reading about its limit", async () => {
    const { response, produced } = await send("/dashboard/sign-in", {
      origin: "http://control.test",
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(response.status).toBe(413);
    expect(await response.text()).toContain("Dashboard forms are limited to");
    expect(produced).toBeLessThan(256 * 1024);
  });
});
