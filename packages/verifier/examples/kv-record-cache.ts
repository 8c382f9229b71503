// A record cache kept in Workers KV, for a consumer running in a Worker: the in-memory
// `RecordCache` lives only as long as one isolate, so a busy Worker would ask the resolver again
// from every fresh isolate. Any `RecordCacheStore` can stand in for it; this one keeps each record
// as JSON under its URL and lets KV drop it when the verifier would stop using it (`expired`).
//
// KV is eventually consistent (a write may take up to 60 s to reach other locations) and takes
// one write per key per second: right for a cache, since the verifier checks every copy's proof
// again and asks the resolver again once a copy is `stale`. The Cache API works the same way
// (`caches.default.put(url, new Response(JSON.stringify(entry), { headers: { "cache-control":
// `max-age=${seconds until entry.expired}` } }))`), per data centre instead of global.
import { type CacheEntry, type RecordCacheStore, Verifier } from "../src/index.ts";

/** The part of a Workers KV binding (`KVNamespace`) this cache uses. */
export interface KvLike {
  get(key: string, type: "json"): Promise<unknown>;
  put(key: string, value: string, options?: { expiration?: number }): Promise<void>;
  delete(key: string): Promise<void>;
}

/** KV refuses an expiration less than 60 s ahead. */
const KV_MIN_EXPIRATION_SECONDS = 60;

export class KvRecordCache implements RecordCacheStore {
  readonly #kv: KvLike;
  readonly #prefix: string;

  constructor(kv: KvLike, prefix = "passport-record:") {
    this.#kv = kv;
    this.#prefix = prefix;
  }

  async get(url: string): Promise<CacheEntry | undefined> {
    const entry = (await this.#kv.get(this.#prefix + url, "json")) as CacheEntry | null;
    return entry ?? undefined;
  }

  async set(url: string, entry: CacheEntry): Promise<void> {
    const soonest = Math.floor(Date.now() / 1000) + KV_MIN_EXPIRATION_SECONDS;
    const expiration = Math.max(Math.ceil(entry.expired / 1000), soonest);
    await this.#kv.put(this.#prefix + url, JSON.stringify(entry), { expiration });
  }

  async delete(url: string): Promise<void> {
    await this.#kv.delete(this.#prefix + url);
  }
}

/** A Worker deciding on the passport named in a request, with its records kept in KV. */
export default {
  async fetch(request: Request, env: { RECORDS: KvLike; PASSPORT_JWKS: string }): Promise<Response> {
    const verifier = new Verifier({
      resolver: "https://resolver.example",
      jwks: JSON.parse(env.PASSPORT_JWKS),
      cache: new KvRecordCache(env.RECORDS),
    });
    const id = new URL(request.url).searchParams.get("passport") ?? "";
    const outcome = await verifier.verify(id, { family: "agent", consequence: "lower" });
    return Response.json(
      { outcome: outcome.outcome, next_step: outcome.next_step },
      { status: outcome.ok ? 200 : 403 },
    );
  },
};
