/**
 * Workers KV as another location sees it (docs/propagation-model.md): every write reaches the
 * central store at once, and each location sees it after its own delay, independently per write
 * and per location. A location never goes back to an older value once it showed a newer one (it
 * shows the newest write whose delay has passed), and a read that finds nothing caches the miss
 * for the reader's `cacheTtl` (60 s, the resolver's default), hiding a write that arrives meanwhile.
 */

/** One KV write as the control plane made it, at `at` (ms since the epoch). A delete has `value: null`. */
export interface KvWrite {
  key: string;
  value: string | Uint8Array | null;
  metadata?: unknown;
  at: number;
}

/** The delay before `write` (its position in the history: `index`) shows in `location`, in ms. */
export type VisibilityDelay = (write: KvWrite, index: number, location: number) => number;

/** KV's default and smallest `cacheTtl`: how long a location keeps a miss. */
const MISS_TTL_MS = 60_000;

export class MultiLocationKv {
  readonly #byKey = new Map<string, { write: KvWrite; index: number }[]>();
  /** location -> key -> a miss is served until this time. */
  readonly #misses = new Map<number, Map<string, number>>();
  readonly #delay: VisibilityDelay;
  /** location -> periods in which its reads fail (a KV outage there). */
  readonly #outages: Map<number, { from: number; to: number }[]>;

  constructor(
    writes: readonly KvWrite[],
    delay: VisibilityDelay,
    outages: Map<number, { from: number; to: number }[]> = new Map(),
  ) {
    this.#delay = delay;
    this.#outages = outages;
    writes.forEach((write, index) => {
      const list = this.#byKey.get(write.key) ?? [];
      list.push({ write, index });
      this.#byKey.set(write.key, list);
    });
  }

  /** The newest write of `key` that `location` shows at `now`, ignoring cached misses. */
  #visible(key: string, location: number, now: number): KvWrite | undefined {
    let newest: { write: KvWrite; index: number } | undefined;
    for (const candidate of this.#byKey.get(key) ?? []) {
      if (candidate.write.at + this.#delay(candidate.write, candidate.index, location) > now) continue;
      if (!newest || candidate.index > newest.index) newest = candidate;
    }
    return newest?.write;
  }

  #read(key: string, location: number, now: number): KvWrite | undefined {
    this.#failIfOut(location, now);
    const misses = this.#misses.get(location) ?? new Map<string, number>();
    this.#misses.set(location, misses);
    const missUntil = misses.get(key);
    if (missUntil !== undefined && now < missUntil) return undefined;
    const write = this.#visible(key, location, now);
    if (!write || write.value === null) {
      misses.set(key, now + MISS_TTL_MS);
      return undefined;
    }
    return write;
  }

  #failIfOut(location: number, now: number): void {
    if ((this.#outages.get(location) ?? []).some((o) => o.from <= now && now < o.to)) {
      throw new Error("KV read failed (modelled outage)");
    }
  }

  /** The `KVNamespace` surface the resolver uses, as `location` sees it at `now()`. */
  at(location: number, now: () => number): KVNamespace {
    const read = (key: string) => this.#read(key, location, now());
    const decode = (write: KvWrite | undefined, type: string) => {
      if (!write || write.value === null) return null;
      const { value } = write;
      if (type === "arrayBuffer") {
        const bytes = typeof value === "string" ? new TextEncoder().encode(value) : value;
        return bytes.slice().buffer;
      }
      const text = typeof value === "string" ? value : new TextDecoder().decode(value);
      return type === "json" ? JSON.parse(text) : text;
    };
    const typeOf = (options: unknown) =>
      typeof options === "string" ? options : ((options as { type?: string } | undefined)?.type ?? "text");
    const kv = {
      get: async (key: string, options?: unknown) => decode(read(key), typeOf(options)),
      getWithMetadata: async (key: string, options?: unknown) => {
        const write = read(key);
        return { value: decode(write, typeOf(options)), metadata: write?.metadata ?? null, cacheStatus: null };
      },
      list: async (options: { prefix?: string; limit?: number; cursor?: string } = {}) => {
        this.#failIfOut(location, now());
        const prefix = options.prefix ?? "";
        const names = [...this.#byKey.keys()].filter((key) => key.startsWith(prefix)).sort();
        const visible = names.flatMap((name) => {
          const write = this.#visible(name, location, now());
          return write && write.value !== null ? [{ name, metadata: write.metadata }] : [];
        });
        const start = options.cursor ? Number(options.cursor) : 0;
        const limit = options.limit ?? 1000;
        const keys = visible.slice(start, start + limit);
        const complete = start + limit >= visible.length;
        return complete
          ? { keys, list_complete: true, cacheStatus: null }
          : { keys, list_complete: false, cursor: String(start + limit), cacheStatus: null };
      },
      put: async () => {
        throw new Error("the resolver never writes KV");
      },
      delete: async () => {
        throw new Error("the resolver never writes KV");
      },
    };
    return kv as unknown as KVNamespace;
  }
}
