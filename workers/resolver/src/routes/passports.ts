import {
  describeIdentityIdDefect,
  type IdentityIdDefect,
  identityCacheTag,
  identityIdDefect,
  type ProblemKind,
  problem,
} from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_RECORD_HEADERS, ifNoneMatch, problemHeaders } from "../http.ts";
import { lookUp, NOT_FOUND_DETAIL, UNAVAILABLE_DETAIL } from "../published-snapshots.ts";
import { answerStatus } from "./status.ts";

const JSON_SUFFIX = ".json";
const STATUS_SUFFIX = "/status";

// Every problem this route answers is fixed text, so bodies and headers are built once.
function prepared(kind: ProblemKind, detail: string, cache: Record<string, string>) {
  const body = problem(kind, { detail });
  return { status: body.status, text: JSON.stringify(body), headers: problemHeaders(cache) };
}
const DEFECTS: readonly IdentityIdDefect[] = ["prefix", "length", "alphabet", "case", "check_character"];
const MALFORMED = Object.fromEntries(
  DEFECTS.map((d) => [d, prepared("malformed-identity-id", describeIdentityIdDefect(d), cacheHeaders("stable"))]),
) as Record<IdentityIdDefect, ReturnType<typeof prepared>>;
const NOT_FOUND = prepared("identity-not-found", NOT_FOUND_DETAIL, cacheHeaders("identity"));
const UNAVAILABLE = prepared("unavailable", UNAVAILABLE_DETAIL, { ...cacheHeaders("none"), "retry-after": "5" });
const NOT_MODIFIED_HEADERS = { ...CORS_RECORD_HEADERS, ...cacheHeaders("identity") };
const RECORD_HEADERS = { ...NOT_MODIFIED_HEADERS, "content-type": "application/json; charset=utf-8" };

/**
 * `GET {base}/api/p/{identity_id}.json`: the published record as stored, or the problem that says
 * why not. A malformed id is answered at once, without storage; otherwise one KV read. HEAD is
 * answered by the same code without a body.
 */
function resolveRecord(env: Env, identityId: string, request: Request): Response | Promise<Response> {
  const defect = identityIdDefect(identityId);
  if (defect) {
    const answer = MALFORMED[defect];
    return new Response(answer.text, { status: answer.status, headers: answer.headers });
  }
  return resolveWellFormed(env, identityId, request);
}

async function resolveWellFormed(env: Env, identityId: string, request: Request) {
  const found = await lookUp(env.SNAPSHOTS, identityId);
  switch (found.kind) {
    case "unknown":
      return new Response(NOT_FOUND.text, {
        status: NOT_FOUND.status,
        headers: { ...NOT_FOUND.headers, "cache-tag": identityCacheTag(identityId) },
      });
    case "unavailable":
      return new Response(UNAVAILABLE.text, { status: UNAVAILABLE.status, headers: UNAVAILABLE.headers });
  }
  const { body, metadata } = found.snapshot;
  const tag = identityCacheTag(identityId);
  if (!metadata) return new Response(body, { headers: { ...RECORD_HEADERS, "cache-tag": tag } });
  const etag = `"${metadata.digest}"`;
  // The log index of this exact version (docs/transparency-log.md), from the metadata like the rest.
  const logIndex = metadata.log_index;
  if (ifNoneMatch(request.headers.get("if-none-match"), etag)) {
    const headers: Record<string, string> = { ...NOT_MODIFIED_HEADERS, "cache-tag": tag, etag };
    if (logIndex !== undefined) headers["passport-log-index"] = String(logIndex);
    return new Response(null, { status: 304, headers });
  }
  // The signature travels beside the body so the bytes a consumer parses stay exactly as published.
  const headers: Record<string, string> = { ...RECORD_HEADERS, "cache-tag": tag, etag };
  if (metadata.signature) headers["passport-signature"] = metadata.signature;
  if (logIndex !== undefined) headers["passport-log-index"] = String(logIndex);
  return new Response(body, { headers });
}

const PREFIX = "/api/p/";

/**
 * The same route without the router, for the resolver's hottest path: Hono's dispatch costs a
 * measurable share of a request this small (docs/resolver.md, "Performance"). It takes only plain
 * `/api/p/{segment}.json` GET and HEAD requests, and plain `/api/p/{segment}/status` GETs (whose
 * own work is one Durable Object call, so routing would be most of the rest); anything else,
 * including a percent-encoded segment, goes through the Hono app, whose answer is the same (tested).
 */
export function fastResolve(request: Request, env: Env): Response | Promise<Response> | undefined {
  const { method, url } = request;
  const isHead = method === "HEAD";
  if (method !== "GET" && !isHead) return undefined;
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart < 0 || !url.startsWith(PREFIX, pathStart)) return undefined;
  let end = url.indexOf("?", pathStart);
  if (end < 0) end = url.length;
  const file = url.slice(pathStart + PREFIX.length, end);
  if (file.includes("%")) return undefined;
  if (file.endsWith(STATUS_SUFFIX)) {
    const id = file.slice(0, -STATUS_SUFFIX.length);
    if (isHead || id.includes("/")) return undefined;
    return answerStatus(env, id, request.headers.get("cf-connecting-ip"));
  }
  if (!file.endsWith(JSON_SUFFIX) || file.includes("/")) return undefined;
  const answer = resolveRecord(env, file.slice(0, -JSON_SUFFIX.length), request);
  if (!isHead) return answer;
  return answer instanceof Response ? new Response(null, answer) : answer.then((r) => new Response(null, r));
}

export const passports = new Hono<{ Bindings: Env }>();

passports.get("/:file", (c) => {
  const file = c.req.param("file");
  if (!file.endsWith(JSON_SUFFIX)) return c.notFound();
  return resolveRecord(c.env, file.slice(0, -JSON_SUFFIX.length), c.req.raw);
});
