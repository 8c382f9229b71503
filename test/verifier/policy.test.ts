// Issue 27: the consumer's policy document. The zod PassportPolicy (packages/domain) is the source
// of truth; the verifier's hand-written loadPolicy must accept exactly what it accepts.
import { PassportPolicy, POLICY_OUTCOME_CLASSES } from "@passport/domain";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadPolicy, PolicyError, policyDigest, versionSatisfies } from "../../packages/verifier/src/index.ts";

const base = { policy_format: "svc.passport_policy", version: 1 };

function pointerOf(input: unknown): string {
  try {
    loadPolicy(input);
  } catch (error) {
    if (error instanceof PolicyError) return error.path;
    throw error;
  }
  throw new Error("the policy was accepted");
}

describe("loadPolicy refuses an invalid policy with the JSON pointer of the first problem", () => {
  it.each([
    [
      "a misspelt consequence",
      { ...base, actions: { refund: { consequence: "highest" } } },
      "/actions/refund/consequence",
    ],
    [
      "an unknown member (a typo)",
      { ...base, actions: { refund: { enviroments: ["production"] } } },
      "/actions/refund/enviroments",
    ],
    ["a missing actions", base, "/actions"],
    ["the wrong format", { ...base, policy_format: "other", actions: {} }, "/policy_format"],
    [
      "a decision that is not one",
      { ...base, actions: { read: { outcomes: { stale: "ignore" } } } },
      "/actions/read/outcomes/stale",
    ],
    [
      "an outcome that is not a class",
      { ...base, actions: { read: { outcomes: { fine: "allow" } } } },
      "/actions/read/outcomes/fine",
    ],
    ["a bad version range", { ...base, actions: { read: { versions: "^2..1" } } }, "/actions/read/versions"],
    [
      "an amount without currency",
      { ...base, actions: { refund: { authority: { amount: { value: "10" } } } } },
      "/actions/refund/authority/amount/currency",
    ],
    [
      "a lowercase currency",
      { ...base, actions: { refund: { authority: { amount: { value: "10", currency: "eur" } } } } },
      "/actions/refund/authority/amount/currency",
    ],
    ["an empty environment list", { ...base, actions: { read: { environments: [] } } }, "/actions/read/environments"],
    [
      "a bad entry in a list",
      { ...base, actions: { read: { claims: [{ claim: "a" }, { claim: "b", max_age: "soon" }] } } },
      "/actions/read/claims/1/max_age",
    ],
    [
      "a name with a slash, escaped",
      { ...base, actions: { "payments/refund": { family: "robot" } } },
      "/actions/payments~1refund/family",
    ],
    ["a bad default", { ...base, defaults: { lifecycle: "active" }, actions: {} }, "/defaults/lifecycle"],
    [
      "a caller policy without required",
      { ...base, actions: { read: { caller: { family: "agent" } } } },
      "/actions/read/caller/required",
    ],
    ["a prototype name as a member", { ...base, actions: { read: { constructor: "x" } } }, "/actions/read/constructor"],
  ])("%s", (_, policy, pointer) => {
    expect(pointerOf(policy)).toBe(pointer);
    expect(PassportPolicy.safeParse(policy).success).toBe(false);
  });

  it("names the problem in its message, and refuses text that is not JSON or repeats a member", () => {
    expect(() => loadPolicy({ ...base, actions: { refund: { consequence: "highest" } } })).toThrow(
      "policy /actions/refund/consequence: must be one of lower, changing, higher",
    );
    expect(pointerOf("{not json")).toBe("");
    expect(() => loadPolicy('{"policy_format":"svc.passport_policy","version":1,"actions":{},"actions":{}}')).toThrow(
      /duplicate member name "actions"/,
    );
  });

  it("accepts a full policy, from text or value, and digests it independently of spacing and member order", async () => {
    const policy = {
      ...base,
      defaults: { family: "api", outcomes: { network_failure: "delay" } },
      actions: {
        read: { consequence: "lower", outcomes: { state_not_operative: "delay" } },
        refund: {
          consequence: "higher",
          organisations: ["org_acme", { parent: "org_group", relationship: "responsible" }],
          environments: ["production"],
          versions: "^2.1.0",
          bindings: [{ class: "endpoint" }],
          claims: [{ claim: "organisation.domain_control", max_age: "30d" }],
          authority: {
            action: "payments.refund",
            amount: { value: "100.00", currency: "EUR" },
            granted_by: ["responsible"],
          },
          lifecycle: ["active"],
          status_max_age: 30,
          outcomes: { stale: "re-resolve", authority_expired: "challenge" },
          caller: { required: true, family: "agent", uses_link: true, signature_window: "60s" },
        },
      },
    };
    expect(PassportPolicy.parse(policy)).toEqual(policy);
    expect(loadPolicy(JSON.stringify(policy))).toEqual(policy);
    const reordered = JSON.parse(
      JSON.stringify({
        actions: policy.actions,
        version: 1,
        defaults: policy.defaults,
        policy_format: base.policy_format,
      }),
    );
    expect(await policyDigest(loadPolicy(reordered))).toBe(
      await policyDigest(loadPolicy(JSON.stringify(policy, null, 2))),
    );
    expect(await policyDigest(policy as never)).toMatch(/^sha-256:[A-Za-z0-9_-]{43}$/);
  });

  it("returns a frozen copy: the caller's object changed afterwards changes neither the policy nor its digest", async () => {
    const mine = { ...base, actions: { refund: { consequence: "higher", lifecycle: ["active"] } } };
    const loaded = loadPolicy(mine);
    const digest = await policyDigest(loaded);
    mine.actions.refund.consequence = "lower";
    mine.actions.refund.lifecycle.push("suspended");
    expect(loaded.actions.refund).toEqual({ consequence: "higher", lifecycle: ["active"] });
    expect(await policyDigest(loaded)).toBe(digest);
    expect(await policyDigest(loadPolicy(mine))).not.toBe(digest);
    expect(() => {
      (loaded.actions.refund as { consequence: string }).consequence = "lower";
    }).toThrow(TypeError);
    // What is checked is the copy: a value that is not plain JSON data is refused as such.
    expect(() => loadPolicy({ ...mine, actions: { refund: { consequence: () => "higher" } } })).toThrow(PolicyError);
    // An object that did not come from loadPolicy is digested as it is now.
    const plain = structuredClone(mine);
    const before = await policyDigest(plain as never);
    plain.actions.refund.consequence = "higher";
    expect(await policyDigest(plain as never)).not.toBe(before);
  });
});

describe("loadPolicy and the zod PassportPolicy agree", () => {
  const name = fc.stringMatching(/^[a-z][a-z.]{0,8}$/);
  const duration = fc.oneof(fc.nat(100_000), fc.constantFrom("90s", "15m", "12h", "30d", "10", "1.5h"));
  const organisation = fc.oneof(
    name,
    fc.record(
      { id: name, parent: name, relationship: fc.constantFrom("responsible", "operator") },
      { requiredKeys: [] },
    ),
  );
  const authority = fc.record(
    {
      action: name,
      resource: name,
      amount: fc.record({ value: fc.constantFrom("0", "100.00", "12.5"), currency: fc.constantFrom("EUR", "USD") }),
      granted_by: fc.uniqueArray(fc.constantFrom("responsible", "parent", "passport"), { minLength: 1 }),
    },
    { requiredKeys: [] },
  );
  const action = fc.record(
    {
      consequence: fc.constantFrom("lower", "changing", "higher"),
      family: fc.constantFrom("api", "agent"),
      organisations: fc.array(organisation, { minLength: 1, maxLength: 3 }),
      environments: fc.array(name, { minLength: 1, maxLength: 3 }),
      versions: fc.constantFrom("^2.1.0", ">=2 <3", "2.x", "2026-10", "~1.2 || 3.x", "1.0.0"),
      bindings: fc.array(fc.record({ class: name, value: name }, { requiredKeys: ["class"] }), {
        minLength: 1,
        maxLength: 2,
      }),
      claims: fc.array(fc.record({ claim: name, max_age: duration }, { requiredKeys: ["claim"] }), {
        minLength: 1,
        maxLength: 2,
      }),
      authority,
      lifecycle: fc.array(fc.constantFrom("active", "suspended"), { minLength: 1, maxLength: 2 }),
      availability: fc.array(fc.constantFrom("available", "degraded"), { minLength: 1, maxLength: 2 }),
      status_max_age: duration,
      outcomes: fc.dictionary(
        fc.constantFrom(...POLICY_OUTCOME_CLASSES),
        fc.constantFrom("allow", "challenge", "deny", "delay", "re-resolve"),
        { maxKeys: 4 },
      ),
      caller: fc.record(
        {
          required: fc.boolean(),
          family: fc.constantFrom("agent", "api"),
          uses_link: fc.boolean(),
          authority,
          signature_window: duration,
        },
        { requiredKeys: ["required"] },
      ),
    },
    { requiredKeys: [] },
  );
  const policy = fc.record(
    {
      policy_format: fc.constant("svc.passport_policy"),
      version: fc.constant(1),
      defaults: action,
      actions: fc.dictionary(name, action, { minKeys: 1, maxKeys: 3 }),
    },
    { requiredKeys: ["policy_format", "version", "actions"] },
  );

  /** Every path to a value in `value`. */
  function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
    const out = [at];
    if (Array.isArray(value)) for (const [i, v] of value.entries()) out.push(...paths(v, [...at, i]));
    else if (typeof value === "object" && value !== null) {
      for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
    }
    return out;
  }

  const replacement = fc.oneof(
    fc.constantFrom(
      null,
      true,
      0,
      -1,
      1.5,
      "",
      "x",
      "highest",
      "^2..1",
      "EUR",
      "eur",
      "100.00",
      [],
      {},
      ["x"],
      { x: 1 },
      "a".repeat(201),
    ),
    fc.string({ maxLength: 4 }),
  );

  /** The document with the value at one path replaced, a member added, or a member removed. */
  const mutated = policy.chain((doc) => {
    const all = paths(doc);
    return fc
      .tuple(
        fc.constantFrom(...all),
        fc.constantFrom("replace", "add", "remove"),
        replacement,
        fc.constantFrom("extra", "consequence", "required", "class", "value"),
      )
      .map(([path, how, value, member]) => {
        const copy = structuredClone(doc) as Record<string, unknown>;
        const parentPath = path.slice(0, -1);
        const last = path.at(-1);
        const parent = parentPath.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], copy) as Record<
          string | number,
          unknown
        >;
        const target = path.length === 0 ? copy : (parent[last as string] as unknown);
        if (how === "replace" && path.length > 0) parent[last as string] = value;
        else if (how === "add" && typeof target === "object" && target !== null && !Array.isArray(target)) {
          (target as Record<string, unknown>)[member] = value;
        } else if (how === "remove" && path.length > 0 && !Array.isArray(parent)) delete parent[last as string];
        return copy;
      });
  });

  const accepts = (doc: unknown) => {
    try {
      loadPolicy(doc);
      return true;
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      return false;
    }
  };

  it("accept every valid document", () => {
    fc.assert(
      fc.property(policy, (doc) => {
        expect(PassportPolicy.safeParse(doc).success).toBe(true);
        expect(accepts(doc)).toBe(true);
        expect(accepts(JSON.stringify(doc))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("accept and refuse the same mutated documents", () => {
    fc.assert(
      fc.property(mutated, (doc) => {
        expect(accepts(doc)).toBe(PassportPolicy.safeParse(doc).success);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("versions: a small semantic-version range matcher", () => {
  it.each([
    ["2.4.1", "^2.1.0", true],
    ["3.0.0", "^2.1.0", false],
    ["2.0.9", "^2.1.0", false],
    ["0.2.5", "^0.2.3", true],
    ["0.3.0", "^0.2.3", false],
    ["1.2.9", "~1.2.3", true],
    ["1.3.0", "~1.2.3", false],
    ["2.5.0", ">=2 <3", true],
    ["3.0.0", ">=2 <3", false],
    ["3.0.0-rc.1", ">=2 <3", false],
    ["2.9.9", "2.x", true],
    ["3.0.0", "2.x", false],
    ["2.1.0", "2.1.0", true],
    ["2.1.1", "2.1.0", false],
    ["2.1.0-beta.2", ">=2.1.0-beta.1", true],
    ["2.1.0-beta.2", "^2.0.0", false],
    ["1.4.7", "<=1.4", true],
    ["1.5.0", "<=1.4", false],
    ["1.5.0", ">1.4", true],
    ["1.4.9", ">1.4", false],
    ["4.0.0", "1.x || >=4", true],
    ["2.0.0", "1.x || >=4", false],
    ["2026-10", "2026-10", true],
    ["2026-11", "2026-10", false],
    ["2026-10", "^2026.10.0", false],
  ])("%s against %s: %s", (actual, range, expected) => {
    expect(versionSatisfies(actual, range)).toBe(expected);
  });
});
