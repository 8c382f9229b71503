// Issue 27: Verifier.decide. One record decided under several policies, structured authority,
// per-binding context, and receipts re-checked against the transparency log. Records are in the
// contract shape (CONTRACT 1a/1b, docs/record-format.md), built and signed here.
import { describe, expect, it } from "vitest";
import {
  type DecisionReceipt,
  type FetchLike,
  loadPolicy,
  type PolicyDocument,
  policyDigest,
  verifyReceipt,
} from "../../packages/verifier/src/index.ts";
import { tokenDigest } from "../../packages/verifier/src/receipt.ts";
import { LogResolver } from "./log-support.ts";
import {
  type ContractRecord,
  contractRecord,
  NOW,
  Owner,
  observed,
  RESOLVER,
  RecordServer,
  resolverFetch,
  verified,
  verifierFor,
} from "./support.ts";

const TARGET = "https://api.contract.example/v1/charges";
const at = (days: number) => new Date(NOW + days * 86_400_000).toISOString();

async function served(record: ContractRecord = contractRecord()) {
  const server = await RecordServer.create();
  const published = await server.publish(record);
  return { server, id: published.identity_id, verifier: server.verifier() };
}

const policy = (actions: PolicyDocument["actions"], defaults?: PolicyDocument["defaults"]): PolicyDocument =>
  loadPolicy({ policy_format: "svc.passport_policy", version: 1, ...(defaults ? { defaults } : {}), actions });

/** A structured grant by the record's responsible organisation, valid from yesterday for a week. */
function grant(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    action: "payments.refund",
    scope: { resource: "org:acme/customers/*", limits: { amount: { value: "100.00", currency: "EUR" } } },
    granted_by: { kind: "organisation", id: "org_contract", relationship: "responsible", role: "admin" },
    granted_at: at(-1),
    expires_at: at(6),
    ...extra,
  };
}

describe("one record, several policies: each gives its own decision", () => {
  it("a suspended API is a delay for reads and a deny for payments; an unmatched environment is a challenge where the policy says so", async () => {
    const { id, verifier } = await served(
      contractRecord({ state: { lifecycle: "suspended", environment: "production", version: "2.4.1", as_of: at(-1) } }),
    );
    const document = policy({
      read: { family: "api", outcomes: { state_not_operative: "delay" } },
      pay: { family: "api", consequence: "lower", outcomes: { state_not_operative: "deny" } },
      suspended_ok: { lifecycle: ["active", "suspended"], versions: "^2.1.0", environments: ["production"] },
      staging_only: {
        lifecycle: ["active", "suspended"],
        environments: ["staging"],
        outcomes: { environment_or_version_mismatch: "challenge" },
      },
      old_version: { lifecycle: ["active", "suspended"], versions: ">=3" },
    });
    const decide = (action: string) => verifier.decide(id, { policy: document, action, baseUrl: TARGET });
    const read = await decide("read");
    expect([read.decision, read.outcome.outcome]).toEqual(["delay", "state_not_operative"]);
    const pay = await decide("pay");
    expect([pay.decision, pay.outcome.outcome]).toEqual(["deny", "state_not_operative"]);
    const ok = await decide("suspended_ok");
    expect([ok.decision, ok.outcome.outcome]).toEqual(["allow", "ok"]);
    const staging = await decide("staging_only");
    expect([staging.decision, staging.outcome.outcome]).toEqual(["challenge", "environment_or_version_mismatch"]);
    const old = await decide("old_version");
    expect(old.decision).toBe("deny");
    expect(old.outcome).toMatchObject({
      outcome: "environment_or_version_mismatch",
      mismatches: [{ field: "version", expected: ">=3", actual: "2.4.1" }],
    });
    expect(read.receipt.action).toBe("read");
    expect(read.receipt.policy_digest).toBe(await policyDigest(document));
  });

  it("an empty action gives exactly today's outcome and next step, proceed as allow", async () => {
    // Each record with the outcome today's verify gives it and the decision that outcome maps to,
    // written out so a change to either shows here (decide and verify share their code).
    const table: [ContractRecord, string, string][] = [
      [contractRecord(), "ok", "allow"],
      [contractRecord({ state: { lifecycle: "revoked", as_of: at(-1) } }), "state_not_operative", "deny"],
      [contractRecord({ state: { lifecycle: "suspended", as_of: at(-1) } }), "state_not_operative", "delay"],
      [contractRecord({ bindings: [] }), "binding_mismatch", "deny"],
      [contractRecord({ state: { lifecycle: "active", recheck_required: true, as_of: at(-1) } }), "stale", "delay"],
    ];
    const expected = { ok: "allow", state_not_operative: undefined, binding_mismatch: "deny", stale: "delay" };
    for (const [record, outcomeClass, decided] of table) {
      const { id, server } = await served(record);
      const today = await server.verifier().verify(id, { baseUrl: TARGET });
      const result = await server
        .verifier()
        .decide(id, { policy: policy({ any: {} }), action: "any", baseUrl: TARGET });
      const { source: _, ...outcome } = result.outcome;
      const { source: __, ...before } = today;
      expect(outcome).toEqual(before);
      expect(result.decision).toBe(today.next_step === "proceed" ? "allow" : today.next_step);
      const wanted = expected[today.outcome as keyof typeof expected];
      if (wanted) expect(result.decision).toBe(wanted);
      expect([today.outcome, result.outcome.outcome, result.decision]).toEqual([outcomeClass, outcomeClass, decided]);
    }
  });

  it("defaults merge under every action, the action's own members and outcomes winning", async () => {
    const { id, verifier } = await served(contractRecord({ state: { lifecycle: "suspended", as_of: at(-1) } }));
    const document = policy(
      { read: {}, pay: { outcomes: { state_not_operative: "challenge" } } },
      { outcomes: { state_not_operative: "re-resolve" } },
    );
    expect((await verifier.decide(id, { policy: document, action: "read" })).decision).toBe("re-resolve");
    expect((await verifier.decide(id, { policy: document, action: "pay" })).decision).toBe("challenge");
    await expect(verifier.decide(id, { policy: document, action: "refnud" })).rejects.toMatchObject({
      name: "PolicyError",
      path: "/actions/refnud",
    });
  });

  it("accepts any one of several organisations", async () => {
    const { id, verifier } = await served();
    const document = policy({
      either: { organisations: ["org_other", "org_contract"] },
      neither: { organisations: ["org_other", { id: "org_third" }] },
    });
    expect((await verifier.decide(id, { policy: document, action: "either" })).decision).toBe("allow");
    const neither = await verifier.decide(id, { policy: document, action: "neither" });
    expect(neither.decision).toBe("challenge");
    expect(neither.outcome).toMatchObject({
      outcome: "organisation_mismatch",
      accepted: [{ id: "org_other" }, { id: "org_third" }],
    });
  });
});

describe("per-binding context: a binding's own environment and version", () => {
  const staging = () =>
    contractRecord({
      bindings: [
        {
          class: "endpoint",
          value: "https://api.contract.example/v1",
          bound_at: at(-30),
          verification: verified("evd_endpoint"),
        },
        {
          class: "endpoint",
          value: "https://staging.contract.example/v1",
          environment: "staging",
          version: "3.0.0-rc.1",
          bound_at: at(-30),
          verification: verified("evd_staging"),
        },
      ],
      evidence: [
        observed("evd_endpoint", "agent.endpoint_control", "https://api.contract.example"),
        observed("evd_staging", "agent.endpoint_control", "https://staging.contract.example"),
      ],
      state: { lifecycle: "active", environment: "production", version: "2.4.1", as_of: at(-30) },
    });
  const production = policy({ pay: { environments: ["production"], versions: "^2.1.0" } });

  it("a staging endpoint under a production passport is refused by a production policy", async () => {
    const { id, verifier } = await served(staging());
    const result = await verifier.decide(id, {
      policy: production,
      action: "pay",
      baseUrl: "https://staging.contract.example/v1/charges",
    });
    expect(result.decision).toBe("deny");
    expect(result.outcome).toMatchObject({
      outcome: "environment_or_version_mismatch",
      mismatches: [
        {
          field: "environment",
          expected: "production",
          actual: "staging",
          binding: { class: "endpoint", value: "https://staging.contract.example/v1" },
        },
        { field: "version", expected: "^2.1.0", actual: "3.0.0-rc.1" },
      ],
    });
    expect(result.receipt.checks).toContainEqual({
      check: "environment",
      result: "failed",
      detail: "staging (endpoint)",
    });
    // The same passport's production endpoint falls back to the passport's state and passes.
    const prod = await verifier.decide(id, { policy: production, action: "pay", baseUrl: TARGET });
    expect(prod.decision).toBe("allow");
  });

  it("plain verify checks the matched binding's environment too", async () => {
    const { id, verifier } = await served(staging());
    const result = await verifier.verify(id, {
      environment: "production",
      baseUrl: "https://staging.contract.example/v1",
    });
    expect(result.outcome).toBe("environment_or_version_mismatch");
    expect((await verifier.verify(id, { environment: "production", baseUrl: TARGET })).outcome).toBe("ok");
  });
});

describe("structured authority", () => {
  const refund = (authority: Record<string, unknown> = {}, outcomes?: Record<string, string>) =>
    policy({
      refund: {
        authority: { action: "payments.refund", ...authority },
        ...(outcomes ? { outcomes } : {}),
      },
    });
  const call = { amount: { value: "50.00", currency: "EUR" }, resource: "org:acme/customers/42" };

  async function decideWith(
    authority: Record<string, unknown>[],
    document = refund(),
    request = call,
    extra: Partial<ContractRecord> = {},
  ) {
    const { id, verifier } = await served(contractRecord({ authority, ...extra }));
    return verifier.decide(id, { policy: document, action: "refund", ...request });
  }

  it("held: a grant by the responsible organisation covering the action, resource and amount", async () => {
    const result = await decideWith([grant()]);
    expect(result.decision).toBe("allow");
    expect(result.authority).toMatchObject({ result: "held", action: "payments.refund", grant: 0 });
    expect(result.receipt.checks).toContainEqual({ check: "authority", result: "passed", detail: "held" });
  });

  it("held through an action pattern and a parent organisation the policy accepts", async () => {
    const parentGrant = grant({
      action: "payments.*",
      granted_by: { kind: "organisation", id: "org_group", relationship: "parent", role: "owner" },
    });
    const organisation = { id: "org_contract", relationship: "responsible", parent: { id: "org_group" } };
    expect((await decideWith([parentGrant], refund(), call, { organisation })).authority?.result).toBe("held");
    const onlyResponsible = refund({ granted_by: ["responsible"] });
    const refused = await decideWith([parentGrant], onlyResponsible, call, { organisation });
    expect([refused.decision, refused.authority?.result]).toEqual(["deny", "not_entitled"]);
  });

  it("not held: no grant; another action; over the limit; another currency; another resource", async () => {
    expect((await decideWith([])).authority?.result).toBe("not_held");
    expect((await decideWith([grant({ action: "payments.capture" })])).authority?.result).toBe("not_held");
    const over = await decideWith([grant()], refund(), { ...call, amount: { value: "100.01", currency: "EUR" } });
    expect(over.authority).toMatchObject({
      result: "not_held",
      detail: expect.stringMatching(/exceeds the limit of 100.00 EUR/),
    });
    expect(
      (await decideWith([grant()], refund(), { ...call, amount: { value: "100", currency: "EUR" } })).authority?.result,
    ).toBe("held");
    const usd = await decideWith([grant()], refund(), { ...call, amount: { value: "5.00", currency: "USD" } });
    expect(usd.authority?.detail).toMatch(/in EUR, not USD/);
    const elsewhere = await decideWith([grant()], refund(), { ...call, resource: "org:other/customers/1" });
    expect(elsewhere.authority?.result).toBe("not_held");
    for (const result of [over, usd, elsewhere]) expect(result.decision).toBe("deny");
  });

  it("expired: the grant's expires_at has passed", async () => {
    const result = await decideWith(
      [grant({ granted_at: at(-10), expires_at: at(-1) })],
      refund({}, { authority_expired: "challenge" }),
    );
    expect(result.authority).toMatchObject({ result: "expired" });
    expect(result.decision).toBe("challenge");
    expect(result.outcome.outcome).toBe("ok");
  });

  it("not entitled: granted by an organisation that is not the passport's, or by someone the policy does not accept", async () => {
    const stranger = grant({
      granted_by: { kind: "organisation", id: "org_stranger", relationship: "responsible", role: "owner" },
    });
    const result = await decideWith([stranger]);
    expect([result.decision, result.authority?.result]).toEqual(["deny", "not_entitled"]);
    const byPassport = grant({ granted_by: { kind: "passport", id: "psp_someone", relationship: "passport" } });
    expect((await decideWith([byPassport])).authority?.result).toBe("not_entitled");
    expect((await decideWith([byPassport], refund({ granted_by: ["passport"] }))).authority?.result).toBe("held");
  });

  it("legacy free text is readable and establishes nothing, whatever it says", async () => {
    const legacy = { action: "payments.refund", context: "may refund up to 1000 EUR", granted_by: "the CFO" };
    const result = await decideWith([legacy]);
    expect(result.authority).toMatchObject({ result: "not_established", grant: 0 });
    expect(result.decision).toBe("deny");
    expect(result.receipt.checks).toContainEqual({ check: "authority", result: "failed", detail: "not_established" });
  });

  it("identity never stands in for authority: a passport that passes every identity check still needs the grant", async () => {
    const { id, verifier } = await served(contractRecord());
    const document = policy({ refund: { family: "api", organisations: ["org_contract"], authority: {} } });
    const result = await verifier.decide(id, { policy: document, action: "refund" });
    expect(result.outcome.outcome).toBe("ok");
    expect([result.decision, result.authority?.result]).toEqual(["deny", "not_held"]);
  });

  it("an identity failure decides first; authority is still reported", async () => {
    const result = await decideWith([grant()], refund(), call, { state: { lifecycle: "suspended", as_of: at(-1) } });
    expect(result.decision).toBe("delay");
    expect(result.authority?.result).toBe("held");
  });
});

describe("the receipt", () => {
  async function logged() {
    const log = await LogResolver.create();
    log.filler(300);
    const published = await log.publish();
    log.filler(20);
    const id = published.record.identity_id;
    const verifier = log.verifier();
    const document = policy({ read: { family: "api", environments: ["production"] } });
    const result = await verifier.decide(id, { policy: document, action: "read", baseUrl: TARGET });
    return { log, verifier, id, published, document, result };
  }

  it("is small, stable JSON naming the record, its log entry and checkpoint, and every check", async () => {
    const { result, id, published } = await logged();
    expect(result.decision).toBe("allow");
    const receipt = result.receipt;
    expect(receipt).toMatchObject({
      receipt_format: "svc.passport_decision",
      version: 1,
      decided_at: new Date(NOW).toISOString(),
      action: "read",
      decision: "allow",
      outcome: "ok",
      subject: {
        identity_id: id,
        record_version: 1,
        digest: published.record.digest,
        kid: "contract-test-key",
        log: { origin: "log.test/passport", index: 300, size: 321 },
      },
    });
    expect(receipt.checks.map((c) => `${c.check}:${c.result}`)).toEqual([
      "record:passed",
      "signature:passed",
      "history:not_checked",
      "log:passed",
      "status:not_checked",
      "family:passed",
      "organisation:not_checked",
      "state:passed",
      "environment:passed",
      "version:not_checked",
      "bindings:passed",
      "evidence:not_checked",
      "freshness:passed",
    ]);
    const bytes = new TextEncoder().encode(JSON.stringify(receipt)).length;
    expect(bytes).toBeLessThan(1200);
  });

  it("re-verifies against the log later, also after the log has grown", async () => {
    const { result, verifier, log, document } = await logged();
    expect(await verifyReceipt(result.receipt, { verifier, policy: document })).toEqual({ ok: true, problems: [] });
    log.filler(400);
    await log.publish(result.receipt.subject.identity_id);
    expect(await verifyReceipt(result.receipt, { verifier: log.verifier() })).toEqual({ ok: true, problems: [] });
  });

  it("reads the log's checkpoint once for both sides, and reports a log it cannot reach as a problem", async () => {
    const { result, log } = await logged();
    const checkpoints: string[] = [];
    const counting: FetchLike = (input, init) => {
      if (input.endsWith("/checkpoint")) checkpoints.push(input);
      return log.fetch(input, init);
    };
    const both = { ...result.receipt, caller: structuredClone(result.receipt.subject) };
    expect(await verifyReceipt(both, { verifier: log.verifier({}, { fetch: counting }) })).toEqual({
      ok: true,
      problems: [],
    });
    expect(checkpoints).toHaveLength(1);

    const unreachable: FetchLike = (input, init) =>
      input.endsWith("/checkpoint") ? Promise.reject(new TypeError("fetch failed")) : log.fetch(input, init);
    const check = await verifyReceipt(both, { verifier: log.verifier({}, { fetch: unreachable, retries: 0 }) });
    expect(check).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/log could not be read .*\(network\)/)],
    });
  });

  it("refuses a tampered receipt: another digest, version, index or checkpoint root, or another policy", async () => {
    const { result, verifier } = await logged();
    const tamper = (change: (r: DecisionReceipt) => void) => {
      const copy = structuredClone(result.receipt);
      change(copy);
      return verifyReceipt(copy, { verifier });
    };
    const subject = (r: DecisionReceipt) => r.subject as Required<DecisionReceipt["subject"]>;
    const cases = [
      (r: DecisionReceipt) => {
        subject(r).digest = "sha-256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
      },
      (r: DecisionReceipt) => {
        subject(r).record_version = 2;
      },
      (r: DecisionReceipt) => {
        subject(r).log.index = 299;
      },
      (r: DecisionReceipt) => {
        subject(r).log.root_hash = btoa(String.fromCharCode(...new Uint8Array(32)));
      },
    ];
    for (const change of cases) {
      const check = await tamper(change);
      expect(check.ok).toBe(false);
      expect(check.problems).toHaveLength(1);
    }
    const other = policy({ read: { family: "agent" } });
    expect(await verifyReceipt(result.receipt, { verifier, policy: other })).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/policy given is not the one/)],
    });
    const { verifier: withoutLog } = await served();
    expect((await verifyReceipt(result.receipt, { verifier: withoutLog })).ok).toBe(false);
  });

  it("names the status token relied on at higher consequence by its digest", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const token = ((await (await resolverFetch(`${RESOLVER}/api/p/${id}/status`)).json()) as { token: string }).token;
    const document = policy({ pay: { family: "api", consequence: "higher" } });
    const result = await verifierFor().decide(id, { policy: document, action: "pay", statusToken: token });
    expect(result.outcome.outcome).toBe("ok");
    expect(result.receipt.subject.status).toEqual({
      issued_at: result.outcome.current_as_of,
      kid: expect.any(String),
      digest: await tokenDigest(token),
    });
    expect(result.receipt.checks).toContainEqual({ check: "status", result: "passed" });
  });
});
