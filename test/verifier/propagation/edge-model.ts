/**
 * Workers Caching in front of the resolver, one cache per location (docs/freshness.md): an answer
 * is kept for the `max-age` of `Cloudflare-CDN-Cache-Control`, else of `Cache-Control`; `no-store`
 * and `private` are not kept; `Age` is added to what it serves; a purge by tag drops every answer
 * carrying the tag in every location from the purge's time on. A conditional request is answered
 * from the stored answer (304 when its ETag matches).
 */

interface Stored {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
  storedAt: number;
  ttlMs: number;
  tags: string[];
}

/** How long the edge keeps an answer, or undefined when it does not keep it. */
function edgeLifetimeMs(headers: Headers): number | undefined {
  const policy = headers.get("cloudflare-cdn-cache-control") ?? headers.get("cache-control") ?? "";
  if (/\b(no-store|private)\b/.test(policy)) return undefined;
  const maxAge = /\bmax-age=(\d+)/.exec(policy);
  return maxAge ? Number(maxAge[1]) * 1000 : undefined;
}

export type Origin = (request: Request) => Promise<Response>;

export class EdgeCache {
  readonly #stores = new Map<number, Map<string, Stored>>();
  /** Purges that took effect: tag and time. */
  readonly purges: { tag: string; at: number }[] = [];

  purge(tag: string, at: number): void {
    this.purges.push({ tag, at });
  }

  #live(entry: Stored, now: number): boolean {
    // A run visits times out of order (a provider's stapled token is fetched before the read that
    // comes earlier in the list): an answer stored after `now` cannot be seen at `now`.
    if (now < entry.storedAt || now >= entry.storedAt + entry.ttlMs) return false;
    return !this.purges.some((p) => entry.tags.includes(p.tag) && p.at > entry.storedAt && p.at <= now);
  }

  /** Answers `request` in `location` at `now`, from the cache or from `origin`. */
  async fetch(location: number, now: number, request: Request, origin: Origin): Promise<Response> {
    if (request.method !== "GET") return origin(request);
    const store = this.#stores.get(location) ?? new Map<string, Stored>();
    this.#stores.set(location, store);
    const key = request.url;
    let entry = store.get(key);
    if (!entry || !this.#live(entry, now)) {
      const plain = new Request(request.url, { method: "GET" });
      const answer = await origin(plain);
      const ttlMs = edgeLifetimeMs(answer.headers);
      const body = new Uint8Array(await answer.arrayBuffer());
      const headers = [...answer.headers].filter(([name]) => name !== "cloudflare-cdn-cache-control");
      const tags = (answer.headers.get("cache-tag") ?? "").split(",").map((t) => t.trim().toLowerCase());
      entry = { status: answer.status, headers, body, storedAt: now, ttlMs: ttlMs ?? 0, tags };
      if (ttlMs === undefined) {
        store.delete(key);
        // Not kept: what the origin answered to the request as sent (it honours If-None-Match).
        return ttlMs === undefined && request.headers.has("if-none-match") ? origin(request) : served(entry, now);
      }
      store.set(key, entry);
    }
    const etag = entry.headers.find(([name]) => name === "etag")?.[1];
    const conditional = request.headers.get("if-none-match");
    if (entry.status === 200 && etag && conditional && conditional === etag) {
      return new Response(null, { status: 304, headers: withAge(entry, now) });
    }
    return served(entry, now);
  }
}

function withAge(entry: Stored, now: number): Headers {
  const headers = new Headers(entry.headers);
  headers.set("age", String(Math.floor((now - entry.storedAt) / 1000)));
  return headers;
}

function served(entry: Stored, now: number): Response {
  const nullBody = entry.status === 304 || entry.status === 204;
  return new Response(nullBody ? null : entry.body.slice(), { status: entry.status, headers: withAge(entry, now) });
}
