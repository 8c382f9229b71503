import type { KeyLookup } from "@passport/protocol";

/**
 * Signatures that verified, per set of trusted keys. Checking an ES256 signature is a pure function
 * of the signed bytes and the key, and a consumer checks the same bytes again and again: the same
 * record version before every call until it changes, the same stapled status token until the
 * provider refreshes it. So a signature is verified once per key set and remembered under a string
 * that determines the signed bytes exactly (the caller says which).
 *
 * Only successes are kept, at most `limit` per key set, the oldest dropped first. A hit still asks
 * the key set for the signing key and must get the very key it was verified with, so a lookup that
 * no longer trusts the key, or now maps its kid to other key material, gets no hit. A
 * `KeyRing` never changes once built; a Verifier reading keys from a URL builds a new one each time
 * it reads the set, and the old one's entries go with it (a WeakMap).
 */
export class VerifiedMemo<T extends { kid: string }> {
  readonly #byKeys = new WeakMap<KeyLookup, Map<string, { verified: T; key: Promise<CryptoKey> }>>();
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /**
   * What was remembered under `signed` (the string naming the signed bytes) for `keys`, while
   * `keys` still has the very key it was verified with.
   */
  get(keys: KeyLookup, signed: string): T | undefined {
    const known = this.#byKeys.get(keys)?.get(signed);
    return known && keys.key(known.verified.kid) === known.key ? known.verified : undefined;
  }

  remember(keys: KeyLookup, signed: string, verified: T): void {
    const signingKey = keys.key(verified.kid);
    if (!signingKey) return;
    let known = this.#byKeys.get(keys);
    if (!known) {
      known = new Map();
      this.#byKeys.set(keys, known);
    }
    known.set(signed, { verified, key: signingKey });
    if (known.size > this.#limit) {
      const oldest = known.keys().next().value;
      if (oldest !== undefined) known.delete(oldest);
    }
  }
}
