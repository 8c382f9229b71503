// Issue 27: `passport verify <id> --policy policy.json --action NAME` against the real resolver.
import { describe, expect, it } from "vitest";
import { EXIT } from "../../packages/verifier/src/cli/args.ts";
import { run } from "../../packages/verifier/src/cli/main.ts";
import { Owner, pinnedKeys, RESOLVER, resolverFetch } from "./support.ts";

const POLICY = {
  policy_format: "svc.passport_policy",
  version: 1,
  actions: {
    read: { family: "api", environments: ["production"], outcomes: { state_not_operative: "delay" } },
    refund: {
      family: "api",
      consequence: "higher",
      authority: { action: "payments.refund" },
      outcomes: { state_not_operative: "deny" },
    },
  },
};

async function passport(args: string[], files: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run([...args, "--jwks", "keys.json"], {
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    env: { PASSPORT_RESOLVER: RESOLVER },
    fetch: resolverFetch,
    readFile: async (path) => {
      if (path === "keys.json") return JSON.stringify(pinnedKeys());
      const file = files[path];
      if (file === undefined) throw new Error("ENOENT");
      return file;
    },
  });
  return { code, stdout: out.join("\n"), stderr: err.join("\n") };
}

describe("passport verify --policy", () => {
  it("prints the decision, and with --json the result with its receipt", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const files = { "policy.json": JSON.stringify(POLICY) };
    const read = await passport(["verify", id, "--policy", "policy.json", "--action", "read"], files);
    expect(read.code).toBe(EXIT.ok);
    expect(read.stdout).toMatch(/^DECISION {2}allow {2}for action read {2}\(policy sha-256:/);
    expect(read.stdout).toMatch(new RegExp(`OK\\s+ok\\s+${id}`));
    expect(read.stdout).toContain("Why:  the identity checks passed.");
    expect(read.stdout).toContain("Next step without a policy:  proceed");

    // The API passport holds no authority: identity never stands in for it.
    const refund = await passport(
      ["verify", id, "--policy", "policy.json", "--action", "refund", "--amount", "50.00:EUR", "--json"],
      files,
    );
    expect(refund.code).toBe(EXIT.failed);
    const result = JSON.parse(refund.stdout);
    expect(result).toMatchObject({
      decision: "deny",
      outcome: { outcome: "ok" },
      authority: { result: "not_held", action: "payments.refund" },
      receipt: {
        receipt_format: "svc.passport_decision",
        action: "refund",
        decision: "deny",
        subject: { identity_id: id },
      },
    });
    expect(result.receipt.subject.status).toMatchObject({ digest: expect.stringMatching(/^sha-256:/) });

    await owner.state(id, { lifecycle: "suspended" });
    const suspended = await passport(["verify", id, "--policy", "policy.json", "--action", "read"], files);
    expect(suspended.code).toBe(EXIT.failed);
    expect(suspended.stdout).toMatch(/^DECISION {2}delay/);
  });

  it("a bad policy file gets one line naming the JSON pointer, exit 2, before any request", async () => {
    const bad = { ...POLICY, actions: { ...POLICY.actions, refund: { consequence: "highest" } } };
    const cases: [Record<string, string>, string[], string][] = [
      [
        { "policy.json": JSON.stringify(bad) },
        ["--action", "refund"],
        "passport: policy.json: policy /actions/refund/consequence: must be one of lower, changing, higher",
      ],
      [{ "policy.json": "{ not json" }, ["--action", "read"], "passport: policy.json: policy /: is not JSON"],
      [
        { "policy.json": JSON.stringify(POLICY) },
        ["--action", "refnud"],
        'passport: --action: policy.json has no action "refnud" (it has: read, refund)',
      ],
      [{}, ["--action", "read"], "passport: --policy: cannot read policy.json"],
    ];
    for (const [files, extra, line] of cases) {
      const err: string[] = [];
      const result = await run(
        ["verify", "psp_k03khmq2ren546nj2zrpdtsmdz", "--policy", "policy.json", ...extra, "--jwks", "keys.json"],
        {
          stdout: () => {},
          stderr: (text) => err.push(text),
          env: { PASSPORT_RESOLVER: RESOLVER },
          fetch: () => Promise.reject(new Error("no request expected")),
          readFile: async (path) => {
            if (path === "keys.json") return JSON.stringify(pinnedKeys());
            const file = files[path];
            if (file === undefined) throw new Error("ENOENT");
            return file;
          },
        },
      );
      expect(result).toBe(EXIT.usage);
      expect(err).toEqual([line]);
    }
  });

  it("refuses expectation flags that contradict the policy, and policy flags without it", async () => {
    const id = "psp_k03khmq2ren546nj2zrpdtsmdz";
    const files = { "policy.json": JSON.stringify(POLICY) };
    const mixed = await passport(
      ["verify", id, "--policy", "policy.json", "--action", "read", "--env", "staging"],
      files,
    );
    expect(mixed.code).toBe(EXIT.usage);
    expect(mixed.stderr).toMatch(/--env and --policy contradict each other/);
    expect((await passport(["verify", id, "--action", "read"])).stderr).toMatch(/--action needs --policy FILE/);
    const amount = await passport(
      ["verify", id, "--policy", "policy.json", "--action", "read", "--amount", "50"],
      files,
    );
    expect(amount.stderr).toMatch(/--amount: "50" is not VALUE:CURRENCY/);
  });
});
