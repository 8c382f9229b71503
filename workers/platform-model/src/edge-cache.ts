import { PLATFORM_LIMITS } from "./limits.ts";
import { type Clock, TokenBucket } from "./token-bucket.ts";

/**
 * Workers Caching in front of one Worker, as the platform behaves (docs/platform-model.md,
 * "Workers Caching"): a read-through cache keyed by path and query, filled per the headers the
 * Worker answers with, purged by tag within the Free-tier purge budget. One instance is one
 * consistent edge: what one caller stored, every caller sees.
 */

/** What `cf-cache-status` says about an answer. */
export type CacheStatus = "HIT" | "MISS" | "EXPIRED" | "BYPASS" | "DYNAMIC";

/** The Worker behind the cache. */
export type Origin = (request: Request) => Promise<Response>;

/** Whether and for how long an answer may be stored, from its headers alone. */
export type Storability = { store: true; ttlMs: number } | { store: false; status: "BYPASS" | "DYNAMIC" };

interface Entry {
  status: number;
  headers: [string, string][];
  body: ArrayBuffer;
  tags: ReadonlySet<string>;
  storedAt: number;
  expiresAt: number;
  /** Request headers named by `Vary`, with the values of the request that filled the entry. */
  vary: [string, string][];
}

/** Counters a test or a simulation reads. */
export interface EdgeCacheCounters {
  hit: number;
  miss: number;
  expired: number;
  bypass: number;
  dynamic: number;
  purgesAccepted: number;
  purgesRefused: number;
  entriesPurged: number;
}

/** Headers the edge consumes and never hands on (Cache-Tag is stripped before clients and Workers see it). */
const EDGE_ONLY_HEADERS = ["cache-tag", "cloudflare-cdn-cache-control"];
/** Request headers that make a fill conditional; the edge fills with the full answer and answers conditions itself. */
const CONDITIONAL_HEADERS = ["if-none-match", "if-modified-since"];
/** Statuses that are never stored, whatever their headers say. */
const NEVER_STORED = new Set([206, 304]);

/** The directives of one Cache-Control style header, lower-cased; a directive without a value maps to "". */
function parseCacheControl(value: string): Map<string, string> {
  const directives = new Map<string, string>();
  for (const part of value.split(",")) {
    const [name, ...rest] = part.split("=");
    const key = name?.trim().toLowerCase();
    if (key) directives.set(key, rest.join("=").trim().replace(/^"|"$/g, ""));
  }
  return directives;
}

function seconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

/**
 * Decides from an answer's headers whether the edge stores it. The first header present wins:
 * `Cloudflare-CDN-Cache-Control`, then `CDN-Cache-Control` (RFC 9213), then `Cache-Control`
 * (RFC 9111, where `s-maxage` comes before `max-age` for a shared cache). `no-store`, `private`
 * and `no-cache` bypass the cache, as does `Set-Cookie`; an answer with no lifetime is DYNAMIC.
 */
export function storability(status: number, headers: Headers): Storability {
  if (headers.has("set-cookie")) return { store: false, status: "BYPASS" };
  const targeted = headers.get("cloudflare-cdn-cache-control") ?? headers.get("cdn-cache-control");
  const general = headers.get("cache-control");
  const value = targeted ?? general;
  if (value === null || NEVER_STORED.has(status) || status < 200) return { store: false, status: "DYNAMIC" };
  const directives = parseCacheControl(value);
  if (directives.has("no-store") || directives.has("private") || directives.has("no-cache")) {
    return { store: false, status: "BYPASS" };
  }
  const lifetime =
    targeted === null
      ? (seconds(directives.get("s-maxage")) ?? seconds(directives.get("max-age")))
      : seconds(directives.get("max-age"));
  if (lifetime === undefined) return { store: false, status: "DYNAMIC" };
  if (lifetime === 0) return { store: false, status: "BYPASS" };
  return { store: true, ttlMs: lifetime * 1000 };
}

/** The tags of an answer's `Cache-Tag` headers: comma-separated, case-insensitive. */
function tagsOf(headers: Headers): Set<string> {
  const tags = new Set<string>();
  for (const tag of (headers.get("cache-tag") ?? "").split(",")) {
    const trimmed = tag.trim().toLowerCase();
    if (trimmed) tags.add(trimmed);
  }
  return tags;
}

/** The cache key: path and query, as Workers Caching keys a Worker's answers (one entry point, no props). */
function keyOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}

function weakMatch(ifNoneMatch: string, etag: string | null): boolean {
  if (etag === null) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((tag) => bare(tag) === bare(etag));
}

export interface EdgeCacheOptions {
  origin: Origin;
  /** Defaults to `Date.now`; a simulation passes its own. */
  clock?: Clock;
  /** Defaults to Workers Caching's purge limits, `PLATFORM_LIMITS.purge`. */
  purgeLimits?: { callsPerMinute: number; bucket: number; tagsPerCall: number };
}

export class EdgeCacheModel {
  readonly counters: EdgeCacheCounters = {
    hit: 0,
    miss: 0,
    expired: 0,
    bypass: 0,
    dynamic: 0,
    purgesAccepted: 0,
    purgesRefused: 0,
    entriesPurged: 0,
  };
  readonly #origin: Origin;
  readonly #clock: Clock;
  readonly #budget: TokenBucket;
  readonly #tagsPerCall: number;
  readonly #entries = new Map<string, Entry>();
  /** Fills under way, per key: requests for the same key wait for one origin fetch (request collapsing). */
  readonly #filling = new Map<string, Promise<void>>();
  /**
   * How many purges each tag has seen. A fill that began before a purge of one of its tags is not
   * stored: it may hold what the purge was meant to drop.
   */
  readonly #purgeGeneration = new Map<string, number>();

  constructor({ origin, clock = Date.now, purgeLimits = PLATFORM_LIMITS.purge }: EdgeCacheOptions) {
    this.#origin = origin;
    this.#clock = clock;
    this.#budget = new TokenBucket(purgeLimits.bucket, 60_000 / purgeLimits.callsPerMinute, clock);
    this.#tagsPerCall = purgeLimits.tagsPerCall;
  }

  /** Answers one request as the edge would: from the cache, or from the origin (storing what may be stored). */
  async fetch(request: Request): Promise<Response> {
    if (request.method !== "GET" && request.method !== "HEAD") return this.#pass(request, "DYNAMIC");
    // Workers Caching is bypassed for requests carrying credentials.
    if (request.headers.has("authorization")) return this.#pass(request, "BYPASS");
    const key = keyOf(new URL(request.url));
    const filling = this.#filling.get(key);
    if (filling) await filling;
    const entry = this.#entries.get(key);
    if (entry && this.#varyMatches(entry, request.headers)) {
      if (entry.expiresAt > this.#clock()) return this.#answer(request, entry, "HIT");
      return this.#fill(request, key, "EXPIRED");
    }
    return this.#fill(request, key, "MISS");
  }

  /**
   * `ctx.cache.purge({ tags })` within the Free-tier budget: a call takes one token from a bucket of
   * 25 refilled at 5 a minute, and names at most 100 tags. A refused call drops nothing and answers
   * `{ success: false, errors: [{ code, message }] }`, the result type of `ctx.cache.purge`.
   */
  purge(options: { tags?: string[] }): CachePurgeResult {
    const tags = (options.tags ?? []).map((tag) => tag.trim().toLowerCase());
    if (tags.length > this.#tagsPerCall) {
      this.counters.purgesRefused++;
      return refusal(400, `a purge names at most ${this.#tagsPerCall} tags; this one named ${tags.length}`);
    }
    if (!this.#budget.take()) {
      this.counters.purgesRefused++;
      const retry = Math.ceil(this.#budget.msUntilToken() / 1000);
      return refusal(429, `purge rate limit exceeded (Free-tier purge limits); retry in ${retry} s`);
    }
    this.counters.purgesAccepted++;
    for (const tag of tags) this.#purgeGeneration.set(tag, (this.#purgeGeneration.get(tag) ?? 0) + 1);
    for (const [key, entry] of this.#entries) {
      if (tags.some((tag) => entry.tags.has(tag))) {
        this.#entries.delete(key);
        this.counters.entriesPurged++;
      }
    }
    return { success: true, errors: [] };
  }

  /** Purge calls the budget allows right now. */
  purgeTokens(): number {
    return this.#budget.available();
  }

  async #fill(request: Request, key: string, status: "MISS" | "EXPIRED"): Promise<Response> {
    const generations = new Map(this.#purgeGeneration);
    // Requests for this key wait until the answer is stored (or found not storable).
    let done: () => void = () => undefined;
    const filled = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.#filling.set(key, filled);
    try {
      const response = await this.#origin(this.#fillRequest(request));
      const storable = storability(response.status, response.headers);
      if (!storable.store) {
        this.#count(storable.status);
        return this.#mark(response, storable.status);
      }
      const body = await response.arrayBuffer();
      const now = this.#clock();
      const entry: Entry = {
        status: response.status,
        headers: [...response.headers],
        body,
        tags: tagsOf(response.headers),
        storedAt: now,
        expiresAt: now + storable.ttlMs,
        vary: this.#varyOf(response.headers, request.headers),
      };
      const purgedMeanwhile = [...entry.tags].some(
        (tag) => (this.#purgeGeneration.get(tag) ?? 0) !== (generations.get(tag) ?? 0),
      );
      if (!purgedMeanwhile) this.#entries.set(key, entry);
      return this.#answer(request, entry, status);
    } finally {
      if (this.#filling.get(key) === filled) this.#filling.delete(key);
      done();
    }
  }

  /** The origin request of a fill: a GET without the client's conditions, so the whole answer is stored. */
  #fillRequest(request: Request): Request {
    const headers = new Headers(request.headers);
    for (const name of CONDITIONAL_HEADERS) headers.delete(name);
    return new Request(request.url, { method: "GET", headers });
  }

  async #pass(request: Request, status: "BYPASS" | "DYNAMIC"): Promise<Response> {
    this.#count(status);
    return this.#mark(await this.#origin(request), status);
  }

  #answer(request: Request, entry: Entry, status: "HIT" | "MISS" | "EXPIRED"): Response {
    this.#count(status);
    const headers = new Headers(entry.headers);
    for (const name of EDGE_ONLY_HEADERS) headers.delete(name);
    headers.set("cf-cache-status", status);
    if (status === "HIT") headers.set("age", String(Math.floor((this.#clock() - entry.storedAt) / 1000)));
    const ifNoneMatch = request.headers.get("if-none-match");
    if (ifNoneMatch !== null && entry.status === 200 && weakMatch(ifNoneMatch, headers.get("etag"))) {
      for (const name of ["content-length", "content-type", "content-encoding"]) headers.delete(name);
      return new Response(null, { status: 304, headers });
    }
    const body = request.method === "HEAD" || entry.status === 204 ? null : entry.body.slice(0);
    return new Response(body, { status: entry.status, headers });
  }

  #mark(response: Response, status: CacheStatus): Response {
    const headers = new Headers(response.headers);
    for (const name of EDGE_ONLY_HEADERS) headers.delete(name);
    headers.set("cf-cache-status", status);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }

  #varyOf(response: Headers, request: Headers): [string, string][] {
    const names = (response.get("vary") ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean);
    return names.map((name) => [name, request.get(name) ?? ""]);
  }

  #varyMatches(entry: Entry, request: Headers): boolean {
    return entry.vary.every(([name, value]) => name !== "*" && (request.get(name) ?? "") === value);
  }

  #count(status: CacheStatus): void {
    const counter = status.toLowerCase() as Lowercase<CacheStatus>;
    this.counters[counter]++;
  }
}

function refusal(code: number, message: string): CachePurgeResult {
  return { success: false, errors: [{ code, message }] };
}
