import type { Clock } from "./clock.ts";
import { PLATFORM_LIMITS } from "./limits.ts";

/** What the KV model has seen since it was made or last reset (docs/platform-model.md, Workers KV). */
export interface KvCounters {
  /** Writes (put or delete) the platform would have taken. */
  writes: number;
  /** Writes refused because the key had been written less than the interval before. */
  refusals: number;
  /** The most writes attempted (taken or refused) to one key within any one second. */
  maxWritesPerKeyPerSecond: number;
  /** A key that reached that figure, to name in a report. */
  busiestKey: string | null;
}

/**
 * Workers KV's limit on writes to one key: one a second (docs/platform-model.md). A put or delete
 * of a key written less than `intervalMs` before is refused, as the platform refuses it, with the
 * error the KV binding throws for an HTTP 429 from KV; nothing is written. The check and the
 * record of a write are synchronous, so of two writes started together the second is refused.
 */
export class KvWriteLimit {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  /** When each key was last written (a refused attempt does not count). */
  readonly #lastWrite = new Map<string, number>();
  /** The times of recent attempts per key, for the highest rate seen. */
  readonly #recent = new Map<string, number[]>();
  #counters: KvCounters = { writes: 0, refusals: 0, maxWritesPerKeyPerSecond: 0, busiestKey: null };
  /** Keys whose next write is refused whatever its time (for tests of the refusal path). */
  readonly #refuseNext = new Set<string>();

  constructor(clock: Clock, intervalMs: number = PLATFORM_LIMITS.kv.writeIntervalPerKeyMs) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
  }

  /** Throws the platform's refusal if `key` may not be written now; otherwise records the write. */
  admit(operation: "PUT" | "DELETE", key: string): void {
    const now = this.#clock();
    this.#noteAttempt(key, now);
    const last = this.#lastWrite.get(key);
    if (this.#refuseNext.delete(key) || (last !== undefined && now - last < this.#intervalMs)) {
      this.#counters.refusals++;
      throw new Error(`KV ${operation} failed: 429 Too Many Requests`);
    }
    this.#lastWrite.set(key, now);
    this.#counters.writes++;
  }

  /** Refuses the next write of `key` once, as if another writer had just written it. */
  refuseNextWrite(key: string): void {
    this.#refuseNext.add(key);
  }

  counters(): KvCounters {
    return { ...this.#counters };
  }

  reset(): void {
    this.#lastWrite.clear();
    this.#recent.clear();
    this.#refuseNext.clear();
    this.#counters = { writes: 0, refusals: 0, maxWritesPerKeyPerSecond: 0, busiestKey: null };
  }

  #noteAttempt(key: string, now: number): void {
    const recent = (this.#recent.get(key) ?? []).filter((at) => now - at < 1000);
    recent.push(now);
    this.#recent.set(key, recent);
    if (recent.length > this.#counters.maxWritesPerKeyPerSecond) {
      this.#counters.maxWritesPerKeyPerSecond = recent.length;
      this.#counters.busiestKey = key;
    }
  }
}

/**
 * A KV namespace that writes through `inner` only what `limit` admits; reads, lists and
 * everything else go to `inner` unchanged (propagation is modelled elsewhere: docs/propagation-model.md).
 */
export function modelledKv(inner: KVNamespace, limit: KvWriteLimit): KVNamespace {
  return new Proxy(inner, {
    get(target, property) {
      // Checked when called, refused as a rejected promise, as the binding refuses.
      if (property === "put") {
        return async (key: string, ...rest: unknown[]) => {
          limit.admit("PUT", key);
          return (target.put as (...args: unknown[]) => Promise<void>)(key, ...rest);
        };
      }
      if (property === "delete") {
        return async (key: string) => {
          limit.admit("DELETE", key);
          return target.delete(key);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
