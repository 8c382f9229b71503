/**
 * RFC 8785 (JSON Canonicalization Scheme) for the values `JSON.parse` produces: null, booleans,
 * finite numbers, strings, arrays and plain objects. JCS defines its number and string forms as
 * ECMAScript's `JSON.stringify` output and sorts members by UTF-16 code units, which is what
 * `Array.prototype.sort` does with strings, so the platform does the hard parts. Written here
 * rather than imported so the package keeps no runtime dependencies; a property test checks that
 * it equals the `canonicalize` package (by the RFC's author) that the publisher signs with.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("JSON has no form for a non-finite number");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const object = value as Record<string, unknown>;
    const members = Object.keys(object)
      .sort()
      .filter((key) => object[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`);
    return `{${members.join(",")}}`;
  }
  throw new TypeError(`JSON has no form for a ${typeof value}`);
}
