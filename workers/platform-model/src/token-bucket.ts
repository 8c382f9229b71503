/** Milliseconds since the epoch, as `Date.now()` answers; injected so a model can run in simulated time. */
export type Clock = () => number;

/**
 * A token bucket refilled continuously: `capacity` tokens at most, one more every `refillEveryMs`.
 * A call takes one token or is refused; nothing is queued.
 * @example
 * const bucket = new TokenBucket(25, 12_000, () => Date.now()); // 5 a minute, bursts of 25
 * bucket.take(); // true while a token is left
 */
export class TokenBucket {
  #tokens: number;
  #updatedAt: number;

  constructor(
    readonly capacity: number,
    readonly refillEveryMs: number,
    readonly clock: Clock,
  ) {
    this.#tokens = capacity;
    this.#updatedAt = clock();
  }

  /** Whole tokens available now. */
  available(): number {
    this.#refill();
    return Math.floor(this.#tokens);
  }

  /** Takes one token if there is one. */
  take(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Milliseconds until the next whole token (0 when one is available). */
  msUntilToken(): number {
    this.#refill();
    return this.#tokens >= 1 ? 0 : Math.ceil((1 - this.#tokens) * this.refillEveryMs);
  }

  #refill(): void {
    const now = this.clock();
    const elapsed = Math.max(0, now - this.#updatedAt);
    this.#tokens = Math.min(this.capacity, this.#tokens + elapsed / this.refillEveryMs);
    this.#updatedAt = now;
  }
}
