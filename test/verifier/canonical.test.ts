// One RFC 8785 implementation (@passport/protocol's, no runtime dependencies) is what the control
// plane signs and the verifier checks. It is held to the RFC's own examples, and over arbitrary
// values to an independent implementation, the `canonicalize` package by the RFC's author (a
// development dependency of the tests only).
import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../packages/verifier/src/index.ts";
import { Owner, resolverFetch } from "./support.ts";

const reference = (value: unknown) => canonicalize(value);

describe("canonicalJson (RFC 8785) equals the reference implementation by the RFC's author", () => {
  it("for any JSON value, as JSON.parse returns it", () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: "binary" }), (value) => {
        const parsed = JSON.parse(JSON.stringify(value));
        expect(canonicalJson(parsed)).toBe(reference(parsed));
      }),
      { numRuns: 1000 },
    );
  });

  it("for objects with any member names and numbers of any magnitude", () => {
    const member = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ unit: "binary" }));
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: "binary" }), member), (object) => {
        expect(canonicalJson(object)).toBe(reference(object));
      }),
      { numRuns: 1000 },
    );
  });

  it("for the RFC's own examples: numbers, escapes, and member order by UTF-16 code units", () => {
    const text =
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}';
    const value = JSON.parse(text);
    expect(canonicalJson(value)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
    expect(canonicalJson(value)).toBe(reference(value));
    const names = JSON.parse('{"\\u20ac":1,"\\r":2,"\\ufb33":3,"1":4,"\\ud83d\\ude00":5,"\\u0080":6,"\\u00f6":7}');
    const order: [string, number][] = [
      ["\r", 2],
      ["1", 4],
      ["\u0080", 6],
      ["\u00f6", 7],
      ["\u20ac", 1],
      ["\ud83d\ude00", 5],
      ["\ufb33", 3],
    ];
    expect(canonicalJson(names)).toBe(`{${order.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`);
    expect(canonicalJson(names)).toBe(reference(names));
  });

  it("for records the resolver serves", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport({ display_name: "Zürich payments — €, 😀 and \u2028" });
    const record = await (await resolverFetch(`http://resolver.test/api/p/${id}.json`)).json();
    expect(canonicalJson(record)).toBe(reference(record));
  });
});
