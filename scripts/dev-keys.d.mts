export interface SigningKeyPair {
  /** JSON of the public JWK, with `kid`, `alg` and `use: "sig"`. */
  publicJwk: string;
  /** JSON of the private JWK, with the same `kid` and `alg`. */
  privateJwk: string;
}

export function signingKeyPair(alg?: "ES256" | "RS256", kid?: string): Promise<SigningKeyPair>;
