import { type StrictJsonProblem, strictJsonParse } from "@passport/protocol";
import type { NetworkFailureKind } from "./outcome.ts";

/** The subset of `fetch` this package calls; pass a service binding's `fetch`, a mock or a proxy. */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface HttpPolicy {
  fetch: FetchLike;
  /** Per attempt. */
  timeoutMs: number;
  /** Further attempts after a network failure, a timeout or a 5xx; never after another answer. */
  retries: number;
  /** Delay before the first retry; doubled for each further one. */
  retryDelayMs: number;
  /** Largest body read, in bytes; a longer answer is refused. */
  maxBytes: number;
}

/** Default body cap: a record is a few kilobytes, a full history page of 1000 entries about 400 KB. */
export const DEFAULT_MAX_BYTES = 1_048_576;

/** Same-origin redirects followed per attempt; a redirect to another origin is never followed. */
const MAX_REDIRECTS = 3;

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Why `value` may not be asked for proof, or undefined: only https, or plain http to a loopback
 * address (a resolver on the caller's own machine), and no user information in the URL.
 * @example
 * insecureAddress("http://resolver.example"); // "is not https (plain http only to a loopback address)"
 * insecureAddress("http://127.0.0.1:8787"); // undefined
 */
export function insecureAddress(value: string): string | undefined {
  if (!URL.canParse(value)) return "is not a URL";
  const url = new URL(value);
  if (url.username || url.password) return "carries user information";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && isLoopback(url.hostname)) return undefined;
  return "is not https (plain http only to a loopback address)";
}

export type HttpAnswer =
  | { ok: true; response: Response; attempts: number }
  | { ok: false; kind: NetworkFailureKind; attempts: number; status?: number; problemType?: string; detail: string };

/** The platform's `fetch`, called through `globalThis` (Workers refuse a detached `fetch`). */
export const platformFetch: FetchLike = (input, init) => globalThis.fetch(input, init);

/**
 * `fetch` with concurrent identical GETs (same URL, same headers) coalesced into one request:
 * every caller gets its own copy of the one answer. A flood of calls naming one passport, or many
 * callers of one API starting at once, then costs one read where it would cost one each; the bytes
 * are still the resolver's answer of now. The first caller's signal governs the shared request (a
 * caller whose copy fails that way retries as for any other failure).
 * @example
 * const fetch = coalescing(platformFetch);
 */
export function coalescing(fetch: FetchLike): FetchLike {
  const inFlight = new Map<string, Promise<Response>>();
  return (input, init) => {
    if ((init?.method ?? "GET").toUpperCase() !== "GET" || init?.body) return fetch(input, init);
    const key = `${input}\n${JSON.stringify([...new Headers(init?.headers)])}\n${init?.redirect ?? ""}`;
    let shared = inFlight.get(key);
    if (!shared) {
      shared = fetch(input, init).finally(() => inFlight.delete(key));
      inFlight.set(key, shared);
    }
    // The shared answer is never read itself, only copied, so each copy can be read in full.
    return shared.then((response) => response.clone());
  };
}

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * The deadline of one attempt: it covers the answer and the reading of its body, and is cleared
 * once the body is read (or the attempt gives up), so no timer outlives the request.
 */
class Deadline {
  readonly #controller = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout>;
  constructor(ms: number) {
    this.#timer = setTimeout(
      () => this.#controller.abort(new DOMException(`no answer within ${ms} ms`, "TimeoutError")),
      ms,
    );
    // Node: a deadline alone does not keep a process (the CLI) alive.
    (this.#timer as { unref?: () => void }).unref?.();
  }
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
  get expired(): boolean {
    return this.#controller.signal.aborted;
  }
  clear(): void {
    clearTimeout(this.#timer);
  }
}

/** The deadline of the attempt that produced each answer returned, cleared when its body is read. */
const deadlines = new WeakMap<Response, Deadline>();

/** The service's RFC 9457 problem types start with this; the rest names the problem. */
export const PROBLEM_TYPE_BASE = "urn:svc:passport:problem:";

/** Reads `type` and `detail` from a problem+json body, without trusting it to be one. */
export async function readProblem(response: Response): Promise<{ type?: string; detail?: string }> {
  const contentType = response.headers.get("content-type") ?? "";
  if (!/json/i.test(contentType)) {
    await response.body?.cancel();
    return {};
  }
  try {
    const read = await readCapped(response, 65_536);
    if (!read.ok) return {};
    const body: unknown = JSON.parse(read.text);
    if (typeof body !== "object" || body === null) return {};
    const { type, detail } = body as Record<string, unknown>;
    return {
      ...(typeof type === "string" ? { type } : {}),
      ...(typeof detail === "string" ? { detail } : {}),
    };
  } catch {
    return {};
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // Node's fetch reports "fetch failed" and keeps the reason (ECONNREFUSED, ENOTFOUND...) in `cause`.
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const why = cause ? String(cause.code ?? cause.message ?? "") : "";
  return `${error.message}${why ? ` (${why})` : ""}`;
}

/**
 * GET with a timeout per attempt and bounded retries with exponential back-off. Only failures
 * that say nothing about the passport are retried: the request did not complete, timed out, or
 * the server answered 5xx. Any other answer is returned as is for the caller to interpret.
 * @example
 * const answer = await fetchWithRetry(url, { headers: { accept: "application/json" } }, policy);
 * if (answer.ok) answer.response.status; // 200, 304, 404, ...
 */
export async function fetchWithRetry(
  url: string,
  init: RequestInit,
  policy: HttpPolicy,
  signal?: AbortSignal,
): Promise<HttpAnswer> {
  let attempts = 0;
  let last: Exclude<HttpAnswer, { ok: true }> = { ok: false, kind: "network", attempts, detail: "no attempt made" };
  for (let attempt = 0; attempt <= policy.retries; attempt++) {
    if (attempt > 0) await wait(policy.retryDelayMs * 2 ** (attempt - 1), signal);
    if (signal?.aborted) return { ok: false, kind: "aborted", attempts, detail: "the caller cancelled the request" };
    attempts++;
    const deadline = new Deadline(policy.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal;
    let kept = false;
    try {
      const followed = await fetchSameOrigin(url, init, policy, combined);
      if (!followed.ok) return { ok: false, kind: "unexpected_response", attempts, detail: followed.detail };
      const { response } = followed;
      if (response.status < 500) {
        // The deadline still bounds the body's reading; readCappedBytes clears it.
        deadlines.set(response, deadline);
        kept = true;
        return { ok: true, response, attempts };
      }
      const problem = await readProblem(response);
      last = {
        ok: false,
        kind: "server_error",
        attempts,
        status: response.status,
        ...(problem.type ? { problemType: problem.type } : {}),
        detail: problem.detail ?? `the resolver answered ${response.status}`,
      };
    } catch (error) {
      if (signal?.aborted) return { ok: false, kind: "aborted", attempts, detail: "the caller cancelled the request" };
      last = deadline.expired
        ? { ok: false, kind: "timeout", attempts, detail: `no answer within ${policy.timeoutMs} ms` }
        : { ok: false, kind: "network", attempts, detail: describe(error) };
    } finally {
      if (!kept) deadline.clear();
    }
  }
  return { ...last, attempts };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * One GET that follows redirects itself: within the first address's origin only, at most
 * {@link MAX_REDIRECTS} times. A browser hides a redirect's target (`opaqueredirect`), so there a
 * redirect is refused.
 */
async function fetchSameOrigin(
  url: string,
  init: RequestInit,
  policy: HttpPolicy,
  signal: AbortSignal,
): Promise<{ ok: true; response: Response } | { ok: false; detail: string }> {
  const origin = new URL(url).origin;
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await policy.fetch(current, { ...init, method: "GET", redirect: "manual", signal });
    // A browser's `opaqueredirect` answer has status 0 and hides where it points.
    if (response.status === 0) return { ok: false, detail: `${redactForReport(current)} redirected; not followed` };
    if (!REDIRECTS.has(response.status)) return { ok: true, response };
    await response.body?.cancel();
    const location = response.headers.get("location");
    const next = location && URL.canParse(location, current) ? new URL(location, current) : undefined;
    if (!next) return { ok: false, detail: `${redactForReport(current)} redirected without a usable Location` };
    if (next.origin !== origin) {
      return {
        ok: false,
        detail: `${redactForReport(current)} redirected to another origin (${next.origin}); not followed`,
      };
    }
    if (hop >= MAX_REDIRECTS)
      return { ok: false, detail: `more than ${MAX_REDIRECTS} redirects from ${redactForReport(url)}` };
    current = next.href;
  }
}

function redactForReport(value: string): string {
  const url = new URL(value);
  return `${url.origin}${url.pathname}`;
}

/** Why a body could not be read: too long, or the stream failed (a deadline, a cancel, the network). */
export type ReadFailure = { ok: false; kind: "too_large" | "timeout" | "aborted" | "network"; problem: string };

function streamFailure(error: unknown): ReadFailure {
  const name = error instanceof Error || error instanceof DOMException ? error.name : "";
  if (name === "TimeoutError") {
    return { ok: false, kind: "timeout", problem: "the answer's body did not arrive within the time allowed" };
  }
  if (name === "AbortError") return { ok: false, kind: "aborted", problem: "the answer's body was cancelled" };
  return { ok: false, kind: "network", problem: `the answer's body could not be read (${describe(error)})` };
}

/**
 * Reads a body, at most `maxBytes` of it: a declared `Content-Length` over the cap is refused
 * unread, and the stream is cancelled once it passes the cap, so a host can never make the reader
 * hold more than `maxBytes` plus one chunk. Without `signal`, a stream that fails (the attempt's
 * deadline of {@link fetchWithRetry} passing mid-body, a dropped connection) is answered
 * `{ ok: false }` with its kind, never thrown. With `signal` (the caller keeps its own deadline), it
 * stops the wait for the next chunk (a slow host) and any failed read rejects, for the caller to
 * tell apart.
 */
export async function readCappedBytes(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<{ ok: true; bytes: Uint8Array } | ReadFailure> {
  try {
    return await readCappedStream(response, maxBytes, signal);
  } catch (error) {
    if (signal) throw error;
    return streamFailure(error);
  } finally {
    deadlines.get(response)?.clear();
  }
}

async function readCappedStream(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<{ ok: true; bytes: Uint8Array } | ReadFailure> {
  const tooLong = {
    ok: false as const,
    kind: "too_large" as const,
    problem: `the answer is larger than ${maxBytes} bytes`,
  };
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    return tooLong;
  }
  if (!response.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = response.body.getReader();
  const aborted = new Promise<never>((_, reject) => {
    if (!signal) return;
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  aborted.catch(() => undefined);
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await Promise.race([reader.read(), aborted]);
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel();
      return tooLong;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}

/** {@link readCappedBytes}, decoded as UTF-8 text. */
async function readCapped(response: Response, maxBytes: number): Promise<{ ok: true; text: string } | ReadFailure> {
  const read = await readCappedBytes(response, maxBytes);
  return read.ok ? { ok: true, text: new TextDecoder().decode(read.bytes) } : read;
}

/** Reads a JSON body within the size cap, refusing duplicate member names (see strict-json.ts). */
export async function readStrictJson(
  response: Response,
  maxBytes: number,
): Promise<{ ok: true; value: unknown } | ({ ok: false } & StrictJsonProblem) | ReadFailure> {
  const read = await readCapped(response, maxBytes);
  if (!read.ok) return read;
  return strictJsonParse(read.text);
}

/**
 * The network failure kind for a body that could not be used: the stream's own kind when it failed
 * (`timeout`, `aborted`, `network`), otherwise `unexpected_response` (too long, not JSON...).
 */
export function readFailureKind(read: { kind: string }): NetworkFailureKind {
  return read.kind === "timeout" || read.kind === "aborted" || read.kind === "network"
    ? read.kind
    : "unexpected_response";
}

export interface CacheDirectives {
  maxAge?: number;
  noStore: boolean;
  noCache: boolean;
}

/**
 * The `Cache-Control` directives a private client cache honours (RFC 9111 section 5.2.2).
 * @example
 * cacheDirectives("public, max-age=60"); // { maxAge: 60, noStore: false, noCache: false }
 */
export function cacheDirectives(header: string | null): CacheDirectives {
  const directives: CacheDirectives = { noStore: false, noCache: false };
  for (const part of (header ?? "").split(",")) {
    const [rawName, rawValue] = part.split("=", 2);
    const name = rawName?.trim().toLowerCase();
    const value = rawValue?.trim().replace(/^"|"$/g, "");
    if (name === "no-store") directives.noStore = true;
    else if (name === "no-cache") directives.noCache = true;
    else if (name === "max-age" && value !== undefined && /^\d+$/.test(value)) directives.maxAge = Number(value);
  }
  return directives;
}

/** The `Age` header in seconds (0 when absent or invalid). */
export function ageSeconds(header: string | null): number {
  return header && /^\d+$/.test(header.trim()) ? Number(header.trim()) : 0;
}
