// A grant's limits always apply (docs/verifier.md, Authority): a grant limited to an amount or a
// resource says nothing of a call that does not state one, and a resource is matched segment by
// segment after normalisation, so no dot segment, escape or look-alike separator crosses one.
// Property tests over generated grants and calls, beside the policy tests.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluateAuthority, resourceCovers } from "../../packages/verifier/src/authority.ts";
import type { PassportRecordView, StructuredAuthority } from "../../packages/verifier/src/record.ts";

const NOW = Date.parse("2026-11-28T08:00:00Z");

function recordWith(grants: StructuredAuthority[]): PassportRecordView {
  return {
    identity_id: "psp_limits",
    family: "agent",
    organisation: { id: "org_demo", name: "Demo", relationship: "responsible" },
    bindings: [],
    state: { lifecycle: "active", as_of: "2026-11-01T00:00:00Z" },
    evidence: [],
    authority: grants,
  } as unknown as PassportRecordView;
}

function grant(scope: StructuredAuthority["scope"]): StructuredAuthority {
  return {
    action: "refund",
    ...(scope ? { scope } : {}),
    granted_by: { kind: "organisation", id: "org_demo", relationship: "responsible", role: "admin" },
    granted_at: "2026-11-27T00:00:00Z",
    expires_at: "2026-12-27T00:00:00Z",
  } as StructuredAuthority;
}

const evaluate = (g: StructuredAuthority, call: { amount?: { value: string; currency: string }; resource?: string }) =>
  evaluateAuthority(recordWith([g]), {}, "refund", call, NOW).result;

const segment = fc.stringMatching(/^[a-z0-9:_-]{1,8}$/);
const decimal = fc
  .tuple(fc.nat(100_000), fc.nat(99))
  .map(([units, cents]) => `${units}.${String(cents).padStart(2, "0")}`);
/** What a hostile resource may put in a segment's place to leave it. */
const crossing = fc.constantFrom(
  "..",
  ".",
  "",
  "%2e%2e",
  "%2F..",
  "a%2fb",
  "a%5Cb",
  "..\\..",
  "a\u2215b",
  "a\u2044b",
  "a\uff0fb",
  "\uff0e\uff0e",
  "a\u29f8b",
  "a\u0338b",
  "%252f",
  "a\u0000b",
);

describe("a grant's amount limit applies to every call", () => {
  it("refund with no amount on a grant limited to 100.00 EUR is not_established, never held", () => {
    const limited = grant({ limits: { amount: { value: "100.00", currency: "EUR" } } });
    expect(evaluate(limited, {})).toBe("not_established");
    expect(evaluate(limited, { amount: { value: "50.00", currency: "EUR" } })).toBe("held");
    // A grant with no limit covers a call with no amount.
    expect(evaluate(grant(undefined), {})).toBe("held");
  });

  it("property: held implies an amount was stated within the limit, in its currency", () => {
    fc.assert(
      fc.property(
        decimal,
        fc.option(fc.record({ value: decimal, currency: fc.constantFrom("EUR", "USD") }), { nil: undefined }),
        (limit, amount) => {
          const result = evaluate(
            grant({ limits: { amount: { value: limit, currency: "EUR" } } }),
            amount ? { amount } : {},
          );
          if (result !== "held") return;
          expect(amount).toBeDefined();
          expect(amount?.currency).toBe("EUR");
          expect(Number(amount?.value)).toBeLessThanOrEqual(Number(limit));
        },
      ),
    );
  });
});

describe("resources are matched by segments after normalisation", () => {
  it("org:demo/customers/../../org:victim/x is not covered by org:demo/customers/*", () => {
    const scoped = grant({ resource: "org:demo/customers/*" });
    expect(evaluate(scoped, { resource: "org:demo/customers/c1" })).toBe("held");
    expect(evaluate(scoped, { resource: "org:demo/customers/c1/notes" })).toBe("held");
    expect(evaluate(scoped, { resource: "org:demo/customers/../../org:victim/x" })).toBe("not_held");
    expect(evaluate(scoped, { resource: "org:demo/customers" })).toBe("not_held");
    expect(evaluate(scoped, { resource: "org:demo/customersX/1" })).toBe("not_held");
    // A grant limited to a resource says nothing of a call naming none.
    expect(evaluate(scoped, {})).toBe("not_established");
  });

  it("property: a covered resource starts with the pattern's literal segments and has no crossing segment", () => {
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.array(fc.oneof(segment, crossing), { minLength: 1, maxLength: 6 }),
        (prefix, wildcard, rest) => {
          const pattern = wildcard ? [...prefix, "*"].join("/") : prefix.join("/");
          const resource = [...prefix, ...rest].join("/");
          const covered = resourceCovers(pattern, resource);
          const normalised = resource.normalize("NFKC");
          if (covered) {
            expect(wildcard).toBe(true);
            expect(normalised.startsWith(`${prefix.join("/")}/`)).toBe(true);
            for (const part of normalised.split("/")) expect(["", ".", ".."]).not.toContain(part);
            expect(normalised).not.toMatch(/%2f|%5c|%2e|%25|\\|[\u2044\u2215\u29f8\uff0f]|\u0338/i);
            expect(normalised).not.toContain("\u0000");
          }
          // Any crossing segment makes the resource covered by nothing, not even `*`.
          if (rest.some((part) => !/^[a-z0-9:_-]{1,8}$/.test(part))) {
            expect(covered).toBe(false);
            expect(resourceCovers("*", resource)).toBe(false);
          }
        },
      ),
    );
  });

  it("property: a resource that climbs out with `..` is never held under the grant it climbs out of", () => {
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom("..", "%2e%2e", "\uff0e\uff0e", ".%2e"),
        (own, victim, depth, up) => {
          const scoped = grant({ resource: `${own.join("/")}/*` });
          const resource = [...own, ...Array(depth).fill(up), ...victim].join("/");
          expect(evaluate(scoped, { resource })).not.toBe("held");
        },
      ),
    );
  });
});
