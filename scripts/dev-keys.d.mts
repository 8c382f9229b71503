export interface SigningKeyPair {
  /** JSON of the public JWK, with `kid`, `alg` and `use: "sig"`. */
  publicJwk: string;
  /** JSON of the private JWK, with the same `kid` and `alg`. */
  privateJwk: string;
}

export function signingKeyPair(alg?: "ES256" | "RS256" | "EdDSA", kid?: string): Promise<SigningKeyPair>;

export interface LogKeyPair {
  /** JSON of the private Ed25519 JWK (the LOG_SIGNING_KEY secret). */
  privateJwk: string;
  /** The C2SP note verifier key, named by the log's origin. */
  verifierKey: string;
}

export function logKeyPair(origin: string): Promise<LogKeyPair>;
