// The lookups a provider lets requests cause before their signature could be verified. Any request
// may name any passport in `Passport-Agent` and a keyid the provider has never seen; checking it
// needs that passport's record (and, at `higher`, its status), read from the resolver, whose rate
// limit counts the provider's address, not the caller's. Unbounded, a few forged requests a second
// would spend the provider's whole allowance and cut off legitimate callers and the refresh of its
// own stapled status token. So such lookups come out of two token buckets: one per client, one for
// all clients together, the latter well under the resolver's per-address limit (120 a minute): a
// lookup is at most two reads (the record, and the status at higher or after a 404), so the
// default's 10 lookups a minute leave five sixths of that limit to verified calls and the
// provider's own token. A request signed by a key already proven for the passport it names
// spends nothing, and a lookup whose request then verifies is given back, so what stays spent is
// what forgeries (and requests by keys not proven) cost.
import type { LookupBudget } from "../caller.ts";

export interface UnverifiedLookupOptions {
  /** Lookups one client may cause per minute; default 2. */
  perClient?: number;
  /** Lookups all clients together may cause per minute; default 10. */
  total?: number;
  /** Clients remembered at once; the longest idle go first past it. Default 10,000. */
  maxClients?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const MINUTE_MS = 60_000;

/** Refills `bucket` to `now` at `perMinute` up to `perMinute`, then spends one if it can. */
function spend(bucket: Bucket, perMinute: number, now: number): boolean {
  bucket.tokens = Math.min(perMinute, bucket.tokens + ((now - bucket.at) * perMinute) / MINUTE_MS);
  bucket.at = now;
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

/**
 * A {@link LookupBudget} of two token buckets, per client and in total, each refilled over a
 * minute. A client without an address shares one bucket with every other such client.
 * @example
 * passportProvider({ ..., lookups: new UnverifiedLookups({ perClient: 2, total: 10 }) });
 */
export class UnverifiedLookups implements LookupBudget {
  readonly #perClient: number;
  readonly #total: Bucket;
  readonly #totalPerMinute: number;
  readonly #maxClients: number;
  readonly #clients = new Map<string, Bucket>();

  constructor(options: UnverifiedLookupOptions = {}) {
    this.#perClient = options.perClient ?? 2;
    this.#totalPerMinute = options.total ?? 10;
    this.#maxClients = options.maxClients ?? 10_000;
    this.#total = { tokens: this.#totalPerMinute, at: 0 };
  }

  take(client: string | undefined, now: number): boolean {
    const name = client ?? "";
    let bucket = this.#clients.get(name);
    if (bucket) {
      this.#clients.delete(name);
    } else {
      bucket = { tokens: this.#perClient, at: now };
      if (this.#clients.size >= this.#maxClients) {
        const idlest = this.#clients.keys().next().value;
        if (idlest !== undefined) this.#clients.delete(idlest);
      }
    }
    // Most recently used last, so the first key is the longest idle.
    this.#clients.set(name, bucket);
    if (this.#total.at === 0) this.#total.at = now;
    // The client's own bucket is asked first: a client past its share spends nothing of the total.
    if (!spend(bucket, this.#perClient, now)) return false;
    if (spend(this.#total, this.#totalPerMinute, now)) return true;
    bucket.tokens += 1;
    return false;
  }

  refund(client: string | undefined): void {
    const bucket = this.#clients.get(client ?? "");
    if (bucket) bucket.tokens = Math.min(this.#perClient, bucket.tokens + 1);
    this.#total.tokens = Math.min(this.#totalPerMinute, this.#total.tokens + 1);
  }
}
