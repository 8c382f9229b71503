import type { KeyLookup } from "@passport/protocol";

/** A public signing key as a JWK; only EC P-256 keys with a `kid` are used. */
export interface PublicJwk {
  kty?: string;
  crv?: string;
  x?: string;
  y?: string;
  kid?: string;
  [member: string]: unknown;
}

/** A JWK Set (RFC 7517 section 5), such as the resolver's `/.well-known/jwks.json`. */
export interface JwkSet {
  keys: PublicJwk[];
}

/**
 * The public keys a verifier trusts, by key id. Only the public members of each key are imported,
 * each at most once.
 * @example
 * const ring = new KeyRing(JSON.parse(readFileSync("passport-keys.json", "utf8")));
 * ring.kids; // ["es256-2026-10", ...]
 */
export class KeyRing implements KeyLookup {
  readonly #jwks = new Map<string, JsonWebKey>();
  readonly #imported = new Map<string, Promise<CryptoKey>>();

  constructor(set: unknown) {
    const keys = (set as Partial<JwkSet> | null)?.keys;
    if (!Array.isArray(keys)) throw new TypeError("trusted keys: expected a JWK Set, an object with a `keys` array");
    for (const jwk of keys as PublicJwk[]) {
      if (jwk?.kty !== "EC" || jwk.crv !== "P-256" || typeof jwk.kid !== "string") continue;
      if (typeof jwk.x !== "string" || typeof jwk.y !== "string") continue;
      this.#jwks.set(jwk.kid, { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y });
    }
  }

  /** Key ids of the usable keys, in the order given. */
  get kids(): string[] {
    return [...this.#jwks.keys()];
  }

  key(kid: string): Promise<CryptoKey> | undefined {
    const jwk = this.#jwks.get(kid);
    if (!jwk) return undefined;
    let imported = this.#imported.get(kid);
    if (!imported) {
      imported = crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
      this.#imported.set(kid, imported);
    }
    return imported;
  }
}
