import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { signingKeyPair } from "../../scripts/dev-keys.mjs";
import { type Body, Caller, organisationState, resolve } from "../support/api.ts";
import { attest, TRUSTED_AUDITOR } from "../support/attestation.ts";
import { json, serve, uniqueHost } from "../support/hosts.ts";

// A hostile tenant tries to make its own agent passport look vouched for (issue 25, item 1):
// typing a trusted source's name, or signing with a key of its own, never makes evidence trusted.

const item = (source = TRUSTED_AUDITOR, extra: Record<string, string> = {}) => ({
  claim: "agent.operator_identity",
  source,
  scope: "this agent's operator",
  observed_at: "2026-11-01T00:00:00Z",
  fresh_until: "2099-01-01T00:00:00Z",
  ...extra,
});

async function envelope(id: string): Promise<Body> {
  const response = await env.TEST_RESOLVER.fetch(`http://resolver.test/api/agent-envelope?target=${id}`);
  return response.json<Body>();
}

/** An agent passport of `caller` whose manifest the service verified: only the operator claim is missing. */
async function provenAgent(caller: Caller): Promise<string> {
  const manifest = `https://${uniqueHost("agents")}/agent-card.json`;
  const agent = await caller.createPassport({ family: "agent", bindings: [{ class: "manifest", value: manifest }] });
  const url = new URL(manifest);
  await serve(url.hostname, { [url.pathname]: json({ name: "Agent", passport: agent.identity_id }) });
  const outcome = await caller.json(
    "POST",
    `/v1/passports/${agent.identity_id}/bindings/${agent.bindings[0].id}/verify`,
  );
  expect(outcome.result).toBe("verified");
  return agent.identity_id;
}

describe("evidence counts as trusted only when its source attested it", () => {
  let tenant: Caller;
  let id: string;
  beforeAll(async () => {
    tenant = await Caller.create("editor");
    id = await provenAgent(tenant);
  });

  /** Sends evidence and expects the refusal; nothing is stored and the envelope stays incomplete. */
  async function refused(body: Record<string, unknown>, detail: RegExp) {
    const before = await organisationState(tenant.organisation);
    const response = await tenant.request("POST", `/v1/passports/${id}/evidence`, body);
    expect(response.status).toBe(400);
    const problem = await response.json<Body>();
    expect(problem).toMatchObject({ type: "urn:svc:passport:problem:attestation-invalid" });
    expect(problem.detail).toMatch(detail);
    expect(await organisationState(tenant.organisation)).toBe(before);
    expect(await envelope(id)).toMatchObject({
      posture: "incomplete",
      result: "missing_evidence",
      missing_evidence: ["agent.operator_identity"],
    });
  }

  it("typing the trusted source's name is refused, in any spelling", async () => {
    await refused(item(), /needs its attestation/);
    await refused(item("  demo TRUSTED   auditor "), /needs its attestation/);
    await refused(item("ｄｅｍｏ trusted auditor"), /needs its attestation/);
  });

  it("an attestation signed with the tenant's own key under the auditor's key id is refused", async () => {
    const own = JSON.parse((await signingKeyPair("ES256", "auditor-1")).privateJwk);
    await refused({ ...item(), attestation: await attest(id, item(), { jwk: own }) }, /signed/);
  });

  it("the auditor's attestation of another passport, claim, scope or time is refused", async () => {
    const other = await provenAgent(tenant);
    await refused({ ...item(), attestation: await attest(other, item()) }, /identity_id differs/);
    const elsewhere = { ...item(), scope: "every agent of the organisation" };
    await refused({ ...elsewhere, attestation: await attest(id, item()) }, /scope differs/);
    const longer = { ...item(), fresh_until: "2199-01-01T00:00:00Z" };
    await refused({ ...longer, attestation: await attest(id, item()) }, /fresh_until differs/);
    const claim = { ...item(), claim: "agent.manifest_control" };
    await refused({ ...claim, attestation: await attest(id, item()) }, /claim differs/);
  });

  it("an attestation of another type, or for a source nobody trusts, is refused", async () => {
    await refused({ ...item(), attestation: await attest(id, item(), { typ: "JWT" }) }, /compact JWS/);
    const unknown = item("Another auditor");
    await refused({ ...unknown, attestation: await attest(id, unknown) }, /not a source this service trusts/);
  });

  it("self-written evidence under another name is kept, shown as asserted and never trusted", async () => {
    const view = await tenant.json("POST", `/v1/passports/${id}/evidence`, item("our own review"));
    expect(view.evidence.filter((e: Body) => e.basis === "asserted")).toEqual([
      expect.objectContaining({ source: "our own review", trusted_source: null, attested_by: null }),
    ]);
    const { record } = await resolve(id);
    const asserted = record.evidence.find((e: Body) => e.basis === "asserted");
    expect(asserted).toMatchObject({ source: "our own review" });
    expect(asserted).not.toHaveProperty("trusted_source");
    expect(asserted).not.toHaveProperty("attested_by");
    expect(await envelope(id)).toMatchObject({ posture: "incomplete", missing_evidence: ["agent.operator_identity"] });
  });

  it("the auditor's own attestation makes it trusted; the record and the history name who attested", async () => {
    const agent = await provenAgent(tenant);
    const view = await tenant.json("POST", `/v1/passports/${agent}/evidence`, {
      ...item(),
      attestation: await attest(agent, item()),
    });
    const attestedBy = { source: TRUSTED_AUDITOR, key_id: "auditor-1" };
    expect(view.evidence.filter((e: Body) => e.basis === "asserted")).toEqual([
      expect.objectContaining({ trusted_source: true, attested_by: attestedBy }),
    ]);
    const { record } = await resolve(agent);
    expect(record.evidence.find((e: Body) => e.basis === "asserted")).toMatchObject({
      source: TRUSTED_AUDITOR,
      trusted_source: true,
      attested_by: attestedBy,
    });
    expect(JSON.stringify(record)).not.toContain("attestation");
    expect(await envelope(agent)).toMatchObject({ posture: "current", result: "proof_current" });
    const history = await tenant.json("GET", `/v1/passports/${agent}/history`);
    expect(history.items.at(-1)).toMatchObject({
      kind: "evidence.added",
      detail: { trusted_source: true, attested_by: attestedBy },
    });
  });
});
