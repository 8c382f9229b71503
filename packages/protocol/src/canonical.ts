/**
 * RFC 8785 (JSON Canonicalization Scheme) for the values `JSON.parse` produces: null, booleans,
 * finite numbers, strings, arrays and plain objects. JCS defines its number and string forms as
 * ECMAScript's `JSON.stringify` output and sorts members by UTF-16 code units, which is what
 * `Array.prototype.sort` does with strings, so the platform does the hard parts. The one
 * implementation: the control plane signs with it and the verifier checks with it. Written here
 * rather than imported so the package keeps no runtime dependencies; test/verifier/canonical.test.ts
 * holds it to the RFC's examples and, over arbitrary values, to the `canonicalize` package by the
 * RFC's author.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("JSON has no form for a non-finite number");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") return joinMembers(canonicalMembers(value as Record<string, unknown>));
  throw new TypeError(`JSON has no form for a ${typeof value}`);
}

/** An object's member in canonical form: its name, and `"name":value`. */
export type CanonicalMember = readonly [name: string, text: string];

/**
 * The canonical members of an object, in canonical order (names by UTF-16 code units, which is
 * how both `Array.prototype.sort` and `<` compare strings). Lets a caller add one member without
 * canonicalising the others again (see {@link withMember}).
 */
export function canonicalMembers(object: Record<string, unknown>): CanonicalMember[] {
  return Object.keys(object)
    .sort()
    .filter((key) => object[key] !== undefined)
    .map((key) => [key, `${JSON.stringify(key)}:${canonicalJson(object[key])}`] as const);
}

/** The canonical JSON of an object with these canonical members. */
export function joinMembers(members: readonly CanonicalMember[]): string {
  let text = "{";
  for (let i = 0; i < members.length; i++) text += (i > 0 ? "," : "") + (members[i] as CanonicalMember)[1];
  return `${text}}`;
}

/**
 * The canonical JSON of the object with `members` (none of them named `name`) and the member
 * `name` added: a record's signed form from the members its digest covers.
 */
export function withMember(members: readonly CanonicalMember[], name: string, value: unknown): string {
  let at = 0;
  while (at < members.length && (members[at] as CanonicalMember)[0] < name) at++;
  const member: CanonicalMember = [name, `${JSON.stringify(name)}:${canonicalJson(value)}`];
  return joinMembers([...members.slice(0, at), member, ...members.slice(at)]);
}

/**
 * The bytes a signature covers: the canonical JSON of `value`, UTF-8 encoded.
 * @example
 * await crypto.subtle.sign(algorithm, key, canonicalBytes(record));
 */
export function canonicalBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value));
}
