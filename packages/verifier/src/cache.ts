import type { Proof } from "./outcome.ts";
import type { PassportRecordView } from "./record.ts";

/**
 * How long a copy past its freshness lifetime is kept: it still saves a full read (its ETag makes
 * the next answer a 304) and still counts as a version seen before, so an older record served
 * later is caught as a rollback.
 */
const STALE_COPY_KEPT_MS = 7 * 24 * 60 * 60 * 1000;

/** One cached resolver answer. Times are milliseconds since the epoch. */
export interface CacheEntry {
  record: PassportRecordView;
  /**
   * What was established about the record when it was read; the verifier keeps only records whose
   * proof held. An entry without it, or checked with fewer keys than a verifier needs, is not
   * reused by that verifier.
   */
  proof?: Proof;
  etag?: string;
  /** The `Passport-Log-Index` answered with the record: where its entry is in the transparency log. */
  logIndex?: number;
  /** When the resolver last answered for this copy (200 or 304). */
  confirmedAt: number;
  /** The `Age` the resolver reported with that answer, in seconds. */
  ageAtConfirmation: number;
  /** Freshness lifetime from `Cache-Control: max-age`; absent means revalidate every time. */
  maxAge?: number;
  noCache: boolean;
  /**
   * Until this time the copy may be reused without asking the resolver (at `lower` consequence);
   * from it on, the resolver is asked again, with the copy's ETag. Set from the resolver's
   * `Cache-Control`; a cache may bring it forward, never later.
   */
  stale: number;
  /**
   * From this time on the copy is not used at all: not reused, not revalidated, not compared
   * with. A cache may drop the entry then (a KV `expiration`, a Cache API `max-age`).
   */
  expired: number;
}

/**
 * Where a verifier keeps the records it read, by URL. The in-memory {@link RecordCache} is the
 * default; a Worker can keep them in KV or the Cache API instead, so that a copy outlives one
 * isolate (packages/verifier/examples/kv-record-cache.ts). Entries are plain JSON. A cache may
 * drop any entry at any time, and answer one the verifier did not write only if it came from a
 * verifier with the same trusted keys (a copy checked with other keys is not reused anyway).
 */
export interface RecordCacheStore {
  get(url: string): CacheEntry | undefined | Promise<CacheEntry | undefined>;
  set(url: string, entry: CacheEntry): void | Promise<void>;
  delete(url: string): void | Promise<void>;
}

/**
 * Age in seconds of a cached copy at `now` (RFC 9111 section 4.2.3, without clock-skew terms).
 * @example
 * copyAge(entry, Date.now()); // 12.5
 */
export function copyAge(entry: Pick<CacheEntry, "confirmedAt" | "ageAtConfirmation">, now: number): number {
  return entry.ageAtConfirmation + Math.max(0, now - entry.confirmedAt) / 1000;
}

/** True while the copy may be reused without asking the resolver (before its `stale` time). */
export function isFresh(entry: Pick<CacheEntry, "stale">, now: number): boolean {
  return now < entry.stale;
}

/**
 * The `stale` and `expired` times of a copy the resolver answered at `confirmedAt`: fresh while
 * its age is below `max-age` (never with `no-cache` or without `max-age`), then kept for
 * {@link STALE_COPY_KEPT_MS}.
 */
export function lifetime(
  freshness: Pick<CacheEntry, "confirmedAt" | "ageAtConfirmation" | "maxAge" | "noCache">,
): Pick<CacheEntry, "stale" | "expired"> {
  const { confirmedAt, ageAtConfirmation, maxAge, noCache } = freshness;
  const fresh = !noCache && maxAge !== undefined && ageAtConfirmation < maxAge;
  // 0: stale from the start, whatever the clock says later.
  const stale = fresh ? confirmedAt + (maxAge - ageAtConfirmation) * 1000 : 0;
  return { stale, expired: Math.max(stale, confirmedAt) + STALE_COPY_KEPT_MS };
}

/**
 * A bounded in-memory map of resolver answers by URL; the least recently used entry goes first.
 * Per isolate/process only: it never outlives the verifier that owns it.
 */
export class RecordCache implements RecordCacheStore {
  readonly #entries = new Map<string, CacheEntry>();
  readonly maxEntries: number;

  constructor(maxEntries = 500) {
    this.maxEntries = maxEntries;
  }

  get(url: string): CacheEntry | undefined {
    const entry = this.#entries.get(url);
    if (entry) {
      this.#entries.delete(url);
      this.#entries.set(url, entry);
    }
    return entry;
  }

  set(url: string, entry: CacheEntry): void {
    this.#entries.delete(url);
    this.#entries.set(url, entry);
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  delete(url: string): void {
    this.#entries.delete(url);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
