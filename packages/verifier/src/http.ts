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
}

export type HttpAnswer =
  | { ok: true; response: Response; attempts: number }
  | { ok: false; kind: NetworkFailureKind; attempts: number; status?: number; problemType?: string; detail: string };

/** The platform's `fetch`, called through `globalThis` (Workers refuse a detached `fetch`). */
export const platformFetch: FetchLike = (input, init) => globalThis.fetch(input, init);

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Reads `type` and `detail` from a problem+json body, without trusting it to be one. */
export async function readProblem(response: Response): Promise<{ type?: string; detail?: string }> {
  const contentType = response.headers.get("content-type") ?? "";
  if (!/json/i.test(contentType)) {
    await response.body?.cancel();
    return {};
  }
  try {
    const body: unknown = await response.json();
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
    const timeout = AbortSignal.timeout(policy.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const response = await policy.fetch(url, { ...init, method: "GET", signal: combined });
      if (response.status < 500) return { ok: true, response, attempts };
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
      last = timeout.aborted
        ? { ok: false, kind: "timeout", attempts, detail: `no answer within ${policy.timeoutMs} ms` }
        : { ok: false, kind: "network", attempts, detail: describe(error) };
    }
  }
  return { ...last, attempts };
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
