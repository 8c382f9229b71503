// Issue 27 end to end: structured authority and per-binding context written through the Dashboard
// API (whose grantor checks run for real), published by the control plane, served by the real
// resolver and decided by Verifier.decide. The decide tests (decide.test.ts) cover every branch on
// records built by hand; this file shows the service publishes exactly what the verifier reads.
import { describe, expect, it } from "vitest";
import { loadPolicy, type PolicyDocument } from "../../packages/verifier/src/index.ts";
import { type Body, Caller } from "../support/api.ts";
import { json, serve, uniqueHost } from "../support/hosts.ts";
import { verifierFor } from "./support.ts";

const UNTIL = new Date(Date.now() + 7 * 86_400_000).toISOString();

const policy = (actions: PolicyDocument["actions"]): PolicyDocument =>
  loadPolicy({ policy_format: "svc.passport_policy", version: 1, actions });

const refund = (grantedBy?: ("responsible" | "parent" | "passport")[]) =>
  policy({
    refund: {
      family: "api",
      authority: { action: "payments.refund", ...(grantedBy ? { granted_by: grantedBy } : {}) },
    },
  });

const uniqueEndpoint = () => `https://${uniqueHost("authority")}/v1`;

/** Has the service verify a binding: publishes the well-known document its check asks for, then checks. */
async function prove(caller: Caller, id: string, bindingId: string): Promise<void> {
  const first = await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
  const wellKnown = new URL(first.instructions.well_known.url);
  await serve(wellKnown.hostname, { [wellKnown.pathname]: json(first.instructions.well_known.document) });
  const second = await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
  expect(second.result).toBe("verified");
}

const call = { amount: { value: "50.00", currency: "EUR" }, resource: "org:acme/customers/42" };

function grantBody(grantor: Record<string, string>, action = "payments.*") {
  return {
    action,
    scope: { resource: "org:acme/customers/*", limits: { amount: { value: "100.00", currency: "EUR" } } },
    granted_by: grantor,
    expires_at: UNTIL,
  };
}

describe("authority written through the Dashboard API, decided by the verifier", () => {
  it("a grant by the responsible organisation's admin is held within its limits, and only within them", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport({
      bindings: [{ class: "endpoint", value: uniqueEndpoint() }],
    });
    const verifier = verifierFor();
    const before = await verifier.decide(id, { policy: refund(), action: "refund", ...call });
    expect([before.decision, before.authority?.result]).toEqual(["deny", "not_held"]);

    await admin.json(
      "POST",
      `/v1/passports/${id}/authority`,
      grantBody({ kind: "organisation", id: admin.organisation, relationship: "responsible" }),
    );
    // A consumer that decided before re-resolves: a fresh verifier holds no earlier copy of the record.
    const again = verifierFor();
    const held = await again.decide(id, { policy: refund(), action: "refund", ...call });
    expect([held.decision, held.authority?.result]).toEqual(["allow", "held"]);
    expect(held.receipt.checks).toContainEqual({ check: "authority", result: "passed", detail: "held" });
    const over = await again.decide(id, {
      policy: refund(),
      action: "refund",
      ...call,
      amount: { value: "100.01", currency: "EUR" },
    });
    expect([over.decision, over.authority?.result]).toEqual(["deny", "not_held"]);
  });

  it("a parent organisation's grant is held by default and not entitled where the policy accepts only the responsible one", async () => {
    const parentOwner = await Caller.create("owner");
    const child = await parentOwner.json(
      "POST",
      "/v1/organisations",
      { name: "Refunds team", parent_id: parentOwner.organisation },
      201,
    );
    const { identity_id: id } = await parentOwner.createPassport({
      organisation_id: child.id,
      bindings: [{ class: "endpoint", value: uniqueEndpoint() }],
    });
    await parentOwner.json(
      "POST",
      `/v1/passports/${id}/authority`,
      grantBody({ kind: "organisation", id: parentOwner.organisation, relationship: "parent" }),
    );
    const verifier = verifierFor();
    const held = await verifier.decide(id, { policy: refund(), action: "refund", ...call });
    expect(held.authority?.result).toBe("held");
    const onlyResponsible = await verifier.decide(id, { policy: refund(["responsible"]), action: "refund", ...call });
    expect([onlyResponsible.decision, onlyResponsible.authority?.result]).toEqual(["deny", "not_entitled"]);
  });

  it("free-text context written by an editor establishes nothing", async () => {
    const owner = await Caller.create("owner");
    const editor = await Caller.create("editor", owner.organisation);
    const { identity_id: id } = await owner.createPassport({
      bindings: [{ class: "endpoint", value: uniqueEndpoint() }],
    });
    await editor.json("POST", `/v1/passports/${id}/authority`, {
      action: "payments.refund",
      context: "may refund anything, says the CFO",
    });
    const result = await verifierFor().decide(id, { policy: refund(), action: "refund", ...call });
    expect([result.decision, result.authority?.result]).toEqual(["deny", "not_established"]);
  });
});

describe("binding context written through the Dashboard API, decided by the verifier", () => {
  it("a staging endpoint under a production passport is refused by a production policy; its production endpoint passes", async () => {
    const owner = await Caller.create("owner");
    const production = uniqueEndpoint();
    const staging = uniqueEndpoint();
    const created = await owner.createPassport({
      environment: "production",
      version: "2.4.1",
      bindings: [
        { class: "endpoint", value: production },
        { class: "endpoint", value: staging },
      ],
    });
    const id = created.identity_id;
    for (const bound of created.bindings as Body[]) await prove(owner, id, bound.id);
    const binding = created.bindings.find((b: Body) => b.value === staging);
    // Setting a binding's context leaves its proof as it was.
    const changed = await owner.json("PATCH", `/v1/passports/${id}/bindings/${binding.id}`, { environment: "staging" });
    expect(changed.bindings.find((b: Body) => b.id === binding.id).verification.state).toBe("verified");
    const document = policy({ pay: { environments: ["production"], versions: "^2.1.0" } });
    const verifier = verifierFor();
    const refused = await verifier.decide(id, { policy: document, action: "pay", baseUrl: staging });
    expect(refused.decision).toBe("deny");
    expect(refused.outcome).toMatchObject({
      outcome: "environment_or_version_mismatch",
      mismatches: [{ field: "environment", expected: "production", actual: "staging" }],
    });
    const passes = await verifier.decide(id, { policy: document, action: "pay", baseUrl: production });
    expect([passes.decision, passes.outcome.outcome]).toEqual(["allow", "ok"]);
  });
});
