// The local runtime behaves like the edge (docs/limits.md, "Keys"): `npm start` sets
// `cf-connecting-ip` from the connecting socket and ignores what a client sends under that name,
// so the per-client rate limits apply locally exactly as deployed.
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEdgeProxy } from "../../scripts/edge-proxy.mjs";
import { freePort, type ServiceInfo, startService, stopService } from "../local-service.ts";

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/**
 * A POST of `bytes` bytes in 64 KiB chunks with no length (chunked), or with its length, on a
 * fresh connection; resolves to the status (0 for a failed request) and body of the answer.
 */
function upload(
  url: string,
  bytes: number,
  { chunked, headers = {} }: { chunked: boolean; headers?: Record<string, string> },
) {
  return new Promise<{ status: number; body: string }>((resolve) => {
    const req = request(
      url,
      {
        method: "POST",
        agent: false,
        headers: {
          "content-type": "application/json",
          ...(chunked ? {} : { "content-length": String(bytes) }),
          ...headers,
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    // The server may stop reading once it has answered; the answer is what counts.
    req.on("error", () => {});
    const chunk = Buffer.alloc(64 * 1024, "a");
    let sent = 0;
    const more = () => {
      while (sent < bytes) {
        const part = chunk.subarray(0, Math.min(chunk.byteLength, bytes - sent));
        sent += part.byteLength;
        if (!req.write(part)) return void req.once("drain", more);
      }
      req.end();
    };
    more();
  });
}

/** One request as curl sends it: node:http, a fresh connection, raw headers as given. */
function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", headers: init.headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

describe("the edge proxy in front of each local Worker", () => {
  let upstream: ReturnType<typeof createServer>;
  let seen: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
  let close: () => Promise<void>;
  let port = 0;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        seen.push({ headers: req.headers, body });
        res.writeHead(
          201,
          [
            ["set-cookie", "a=1"],
            ["set-cookie", "b=2"],
            ["content-type", "text/plain"],
          ].flat(),
        );
        res.end("made");
      });
    }).listen(0, "127.0.0.1");
    await once(upstream, "listening");
    port = await freePort();
    close = await startEdgeProxy({
      host: "127.0.0.1",
      port,
      upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    });
  });
  afterAll(async () => {
    await close();
    upstream.close();
  });

  it("replaces a client's cf-connecting-ip with the socket's address and appends it to x-forwarded-for", async () => {
    seen = [];
    const answer = await send(`http://127.0.0.1:${port}/marketplace/fulfill?x=1`, {
      method: "POST",
      headers: {
        "cf-connecting-ip": "198.51.100.7",
        "CF-Connecting-IP": "198.51.100.8",
        "x-forwarded-for": "203.0.113.9",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "x-amzn-marketplace-token=t",
    });
    expect(answer).toMatchObject({ status: 201, body: "made", headers: { "set-cookie": ["a=1", "b=2"] } });
    expect(seen).toEqual([
      {
        headers: expect.objectContaining({
          "cf-connecting-ip": "127.0.0.1",
          "x-forwarded-for": "203.0.113.9, 127.0.0.1",
          host: `127.0.0.1:${port}`,
          "content-type": "application/x-www-form-urlencoded",
        }),
        body: "x-amzn-marketplace-token=t",
      },
    ]);
  });

  it("relays an upstream's answer given before the body was read (413 by its length), never 502", async () => {
    const limited = createServer((req, res) => {
      res.writeHead(413, { "content-type": "text/plain", connection: "close" });
      res.end("too large");
      req.socket.end();
    });
    // Like workerd, the upstream honours "Expect: 100-continue": it answers without asking for the body.
    limited.on("checkContinue", (_req, res) => {
      res.writeHead(413, { "content-type": "text/plain", connection: "close" });
      res.end("too large");
    });
    limited.listen(0, "127.0.0.1");
    await once(limited, "listening");
    const proxyPort = await freePort();
    const stop = await startEdgeProxy({
      host: "127.0.0.1",
      port: proxyPort,
      upstream: `http://127.0.0.1:${(limited.address() as AddressInfo).port}`,
    });
    try {
      for (const chunked of [false, true, false, true]) {
        expect(await upload(`http://127.0.0.1:${proxyPort}/v1/passports`, 3_000_000, { chunked })).toEqual({
          status: 413,
          body: "too large",
        });
      }
    } finally {
      await stop();
      limited.close();
    }
  });

  it("sets the address on a request that sent none", async () => {
    seen = [];
    await send(`http://127.0.0.1:${port}/health`);
    expect(seen[0]?.headers).toMatchObject({ "cf-connecting-ip": "127.0.0.1", "x-forwarded-for": "127.0.0.1" });
  });
});

describe("npm start, as deployed: per-client limits and the edge cache", () => {
  let service: ServiceInfo;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    ({ info: service, child } = await startService());
  });
  afterAll(async () => {
    if (child) await stopService(child);
  });

  it("60 rapid posts to /marketplace/fulfill from one client get 10 through, whatever cf-connecting-ip they forge", async () => {
    // The local binding's windows are whole wall-clock minutes: start early in one, so all 60 land in it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 40_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
    const post = (forged?: string) =>
      send(`${service.control}/marketplace/fulfill`, {
        method: "POST",
        headers: {
          accept: "application/json",
          "content-type": "application/x-www-form-urlencoded",
          ...(forged ? { "cf-connecting-ip": forged, "x-forwarded-for": forged } : {}),
        },
        body: "x-amzn-marketplace-token=not-a-real-token",
      });
    // Two forged addresses, half the posts each: were either honoured, 20 would get through.
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => post(i % 2 === 0 ? "198.51.100.1" : "198.51.100.2")),
    );
    const refused = answers.filter((answer) => answer.status === 429);
    expect(answers.length - refused.length).toBe(10);
    expect(refused).toHaveLength(50);
    expect(refused[0]?.headers["retry-after"]).toBe("60");
    expect(JSON.parse(refused[0]?.body ?? "{}")).toMatchObject({ type: "urn:svc:passport:problem:rate-limited" });
    // The same client without any forged header is in the same bucket.
    expect((await post()).status).toBe(429);
  });

  it("relays the control plane's own 413 for an 8 MB body, chunked or with its length, never 502", async () => {
    const authorised = { authorization: `Bearer ${service.token}` };
    for (const chunked of [true, false, true, true, false]) {
      const answer = await upload(`${service.control}/v1/passports`, 8 * 1024 * 1024, { chunked, headers: authorised });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toMatchObject({ status: 413 });
    }
  });

  it("answers a record HIT the second time through the platform model's edge, and a revocation within 30 s", async () => {
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${service.control}${path}`, {
        method,
        headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then((r) => r.json() as Promise<{ identity_id: string; publication: { status: string } }>);
    // The start's token is the owner's of the demo organisation (scripts/dev-auth.mjs).
    const created = await api("POST", "/v1/passports", {
      organisation_id: "org_demo",
      family: "api",
      display_name: `Edge ${Date.now()}`,
    });
    const record = `${service.resolver}/api/p/${created.identity_id}.json`;
    const first = await send(record);
    const second = await send(record);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([first.headers["cf-cache-status"], second.headers["cf-cache-status"]]).toEqual(["MISS", "HIT"]);
    expect(second.headers["cache-tag"]).toBeUndefined();

    const revoked = await api("PATCH", `/v1/passports/${created.identity_id}/state`, { lifecycle: "revoked" });
    expect(revoked.publication.status).toBe("published");
    const start = Date.now();
    let lifecycle = "";
    while (Date.now() - start < 30_000) {
      lifecycle = JSON.parse((await send(record)).body).state.lifecycle;
      if (lifecycle === "revoked") break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(lifecycle).toBe("revoked");
  });
});
