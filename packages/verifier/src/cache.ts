import type { Proof } from "./outcome.ts";
import type { PassportRecordView } from "./record.ts";

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
}

/**
 * Age in seconds of a cached copy at `now` (RFC 9111 section 4.2.3, without clock-skew terms).
 * @example
 * copyAge(entry, Date.now()); // 12.5
 */
export function copyAge(entry: Pick<CacheEntry, "confirmedAt" | "ageAtConfirmation">, now: number): number {
  return entry.ageAtConfirmation + Math.max(0, now - entry.confirmedAt) / 1000;
}

/** True while the resolver's own freshness lifetime allows reuse without asking it. */
export function isFresh(entry: CacheEntry, now: number): boolean {
  return !entry.noCache && entry.maxAge !== undefined && copyAge(entry, now) < entry.maxAge;
}

/**
 * A bounded in-memory map of resolver answers by URL; the least recently used entry goes first.
 * Per isolate/process only: it never outlives the verifier that owns it.
 */
export class RecordCache {
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
