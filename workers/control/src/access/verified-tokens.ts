/// <reference path="../node-crypto.d.ts" />
import { createHash } from "node:crypto";

/**
 * A per-isolate memory of bearer tokens that passed verification (docs/auth.md, "Verified-token
 * cache"): an ES256 or RS256 check was the largest single CPU cost of a list request. An entry is
 * keyed by the SHA-256 of the verifying configuration and the token together, so a token checked
 * under one issuer, audience, key source or environment is never taken as checked under another;
 * it holds what the token proved (the principal) and its `exp` and `nbf`, never the token; its
 * time bounds are checked again at every use; and the cache holds at most `capacity` entries, each
 * for at most `maxAgeMs` (so a key withdrawn from the identity provider's set stops being trusted
 * within that time, as jose's own key-set cache bounds it).
 */
export interface VerifiedToken<P> {
  principal: P;
  /** Seconds since the epoch, as in the token. */
  exp: number;
  nbf?: number;
}

interface Entry<P> extends VerifiedToken<P> {
  /** Milliseconds since the epoch after which the entry is verified afresh, whatever `exp` says. */
  until: number;
}

/**
 * The SHA-256 of `text` in base64, to key a Map by. `node:crypto`'s hash is synchronous, so a cache
 * look-up costs no await; WebCrypto's `digest` would put a promise on every request's path.
 */
function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64");
}

export class VerifiedTokens<P> {
  readonly #entries = new Map<string, Entry<P>>();

  constructor(
    readonly capacity: number,
    /** How long an entry is trusted at most, in milliseconds. */
    readonly maxAgeMs: number,
    /** Clock tolerance in seconds, the same the verification itself allows. */
    readonly toleranceSeconds: number,
  ) {}

  /**
   * The cache key of `token` under `configuration` (any strings that select how a token is
   * verified). JSON keeps the parts apart; a JWT holds no newline.
   */
  key(configuration: readonly string[], token: string): string {
    return digest(`${JSON.stringify(configuration)}\n${token}`);
  }

  /** The principal for `key`, when its token was verified and is still inside its time bounds now. */
  get(key: string, now = Date.now()): P | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    const seconds = now / 1000;
    // The bounds jose applies: expired when exp <= now - tolerance, early when nbf > now + tolerance.
    const expired = entry.exp <= seconds - this.toleranceSeconds;
    const early = entry.nbf !== undefined && entry.nbf > seconds + this.toleranceSeconds;
    if (expired || early || now >= entry.until) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.principal;
  }

  /** Remembers a verified token; the oldest entry makes room when the cache is full. */
  set(key: string, verified: VerifiedToken<P>, now = Date.now()): void {
    this.#entries.delete(key);
    while (this.#entries.size >= this.capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    this.#entries.set(key, { ...verified, until: now + this.maxAgeMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}
