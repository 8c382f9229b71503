// Plays the hosts a tenant binds (well-known documents, agent cards, MCP server descriptions,
// OpenAPI documents, Web Bot Auth key directories and JWK Sets, the npm registry's package metadata, PyPI's JSON API), transparency-log witnesses (witness.ts), webhook receivers (receiver.ts) and a DNS over HTTPS resolver, answering per host name from fixtures that
// tests and `npm start` set through the admin host. Fixtures live in this isolate's memory: the
// simulator is one long-lived Worker per test run or local service.

/** What one path of a simulated host answers. */
export interface Answer {
  status?: number;
  content_type?: string;
  /** The body; an object is sent as JSON. */
  body?: unknown;
  /** Sent as the Location header (for redirects). */
  location?: string;
  /** Wait this long before answering (a slow host). */
  delay_ms?: number;
  /** Send this many bytes of padding instead of `body`, streamed without a length (an oversized answer). */
  stream_bytes?: number;
}

import { type ReceiverFixture, receivedBy, receiverAnswer, registerReceiver } from "./receiver.ts";
import { registerWitness, type WitnessFixture, witnessAnswer } from "./witness.ts";

const ADMIN_HOST = "hosts-sim.invalid";
const DOH_HOST = "dns.hosts-sim.example";

const hosts = new Map<string, Record<string, Answer>>();
const txtRecords = new Map<string, string[]>();

const json = (body: unknown, status = 200, contentType = "application/json") =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": contentType } });

function padding(bytes: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(16 * 1024).fill(0x20);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const size = Math.min(chunk.byteLength, bytes - sent);
      controller.enqueue(chunk.subarray(0, size));
      sent += size;
    },
  });
}

async function answer(spec: Answer): Promise<Response> {
  if (spec.delay_ms) await new Promise((resolve) => setTimeout(resolve, spec.delay_ms));
  const headers = new Headers();
  if (spec.content_type) headers.set("content-type", spec.content_type);
  if (spec.location) headers.set("location", spec.location);
  const body =
    spec.stream_bytes !== undefined
      ? padding(spec.stream_bytes)
      : spec.body === undefined
        ? null
        : typeof spec.body === "string"
          ? spec.body
          : JSON.stringify(spec.body);
  return new Response(body, { status: spec.status ?? 200, headers });
}

/** RFC 8484's JSON form as public resolvers serve it: `GET ?name=&type=TXT`, `application/dns-json`. */
function dnsAnswer(url: URL): Response {
  const name = (url.searchParams.get("name") ?? "").toLowerCase().replace(/\.$/, "");
  const type = (url.searchParams.get("type") ?? "").toUpperCase();
  if (!name || (type !== "TXT" && type !== "16")) return json({ Status: 1, Comment: "only TXT lookups" }, 400);
  const values = txtRecords.get(name);
  const question = [{ name: `${name}.`, type: 16 }];
  const flags = { TC: false, RD: true, RA: true, AD: false, CD: false };
  if (!values) return json({ Status: 3, ...flags, Question: question }, 200, "application/dns-json");
  const quoted = (value: string) => `"${value.replace(/(["\\])/g, "\\$1")}"`;
  return json(
    {
      Status: 0,
      ...flags,
      Question: question,
      Answer: values.map((value) => ({ name: `${name}.`, type: 16, TTL: 300, data: quoted(value) })),
    },
    200,
    "application/dns-json",
  );
}

/**
 * The admin host: `PUT /hosts/{host}` with `{ "paths": { "/path": Answer } }` replaces what a host
 * answers; `PATCH /hosts/{host}` sets only the paths given, for a shared host such as a package
 * registry, where each test publishes its own packages; `PUT /dns/{name}` with `{ "txt": [...] }` sets TXT records (empty removes them);
 * `PUT /witness/{host}` with a {@link WitnessFixture} makes `host` a tlog witness;
 * `PUT /receivers/{host}` with a {@link ReceiverFixture} makes `host` a webhook receiver, and
 * `GET /receivers/{host}` lists what it received.
 */
async function admin(request: Request, url: URL): Promise<Response> {
  if (request.method === "GET" && url.pathname === "/health") return json({ status: "ok" });
  const [, kind, name] = url.pathname.split("/");
  if (request.method === "GET" && kind === "receivers" && name) {
    const received = receivedBy(name.toLowerCase());
    return received ? json({ received }) : json({ error: "not a receiver" }, 404);
  }
  if (request.method === "PATCH" && kind === "hosts" && name) {
    const { paths } = (await request.json()) as { paths?: Record<string, Answer> };
    hosts.set(name.toLowerCase(), { ...hosts.get(name.toLowerCase()), ...paths });
    return new Response(null, { status: 204 });
  }
  if (request.method !== "PUT" || !name) return json({ error: "PUT /hosts/{host} or /dns/{name}" }, 404);
  const body = (await request.json()) as { paths?: Record<string, Answer>; txt?: string[] };
  if (kind === "witness") await registerWitness(name.toLowerCase(), body as unknown as WitnessFixture);
  else if (kind === "receivers") registerReceiver(name.toLowerCase(), body as unknown as ReceiverFixture);
  else if (kind === "hosts") hosts.set(name.toLowerCase(), body.paths ?? {});
  else if (kind === "dns") {
    if (body.txt?.length) txtRecords.set(name.toLowerCase(), body.txt);
    else txtRecords.delete(name.toLowerCase());
  } else return json({ error: "unknown fixture kind" }, 404);
  return new Response(null, { status: 204 });
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const host = url.hostname.toLowerCase();
    // In local development the admin API is also reachable on the simulator's own loopback port.
    if (host === ADMIN_HOST || host === "127.0.0.1" || host === "localhost") return admin(request, url);
    if (host === DOH_HOST && url.pathname === "/dns-query") return dnsAnswer(url);
    const witnessed = await witnessAnswer(host, request, url);
    if (witnessed) return witnessed;
    const receiver = await receiverAnswer(host, request, url);
    if (receiver) return receiver;
    const spec = hosts.get(host)?.[url.pathname];
    if (!spec) return new Response("not found", { status: 404, headers: { "content-type": "text/plain" } });
    return answer(spec);
  },
} satisfies ExportedHandler;
