import canonicalize from "canonicalize";

/** Media type in the `typ` header of every signature the control plane makes. */
export const SIGNATURE_TYPE = "passport+jws";

/** The bytes a signature covers: the RFC 8785 canonical JSON of `value`, UTF-8 encoded. */
export function canonicalBytes(value: unknown): Uint8Array {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError("value has no canonical JSON form");
  return new TextEncoder().encode(canonical);
}
