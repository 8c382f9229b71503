import { env } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import { manifestIndexPrefix, mintIdentityId, snapshotKey } from "@passport/domain";
import { ENVELOPE_ACTION_KINDS, ENVELOPE_ASSURANCES, ENVELOPE_TYPE, RECOMMENDED_PATHS } from "@passport/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { type Body, Caller } from "../support/api.ts";
import { attested, TRUSTED_AUDITOR } from "../support/attestation.ts";
import { json, serve, uniqueHost } from "../support/hosts.ts";

const RESOLVER = "http://resolver.test";
let validator: Validator;
let schema: Body;

beforeAll(async () => {
  const response = await env.TEST_RESOLVER.fetch(`${RESOLVER}/schemas/agent-action-envelope.json`);
  expect(response.status).toBe(200);
  schema = await response.json();
  validator = new Validator(schema as never, "2020-12", false);
});

async function envelopeFor(target: string) {
  const response = await env.TEST_RESOLVER.fetch(`${RESOLVER}/api/agent-envelope?target=${encodeURIComponent(target)}`);
  const body = await response.json<Body>();
  if (response.status === 200) expect(validator.validate(body).errors).toEqual([]);
  return { status: response.status, headers: response.headers, body };
}

const manifestUrl = () => `https://${uniqueHost("agents")}/agent-card.json`;
const TRUSTED = TRUSTED_AUDITOR;
const evidence = (
  claim: string,
  freshUntil = "2099-01-01T00:00:00Z",
  observedAt = "2026-11-01T00:00:00Z",
  source = TRUSTED,
) => ({
  claim,
  source,
  scope: "this agent's operator",
  observed_at: observedAt,
  fresh_until: freshUntil,
});

/** Serves `manifest` naming `id` and has the service verify the binding (observed agent.manifest_control). */
async function proveManifest(caller: Caller, id: string, manifest: string) {
  const url = new URL(manifest);
  await serve(url.hostname, { [url.pathname]: json({ name: "Agent", passport: id }) });
  const passport = await caller.json("GET", `/v1/passports/${id}`);
  const binding = passport.bindings.find((b: Body) => b.value === manifest);
  const outcome = await caller.json("POST", `/v1/passports/${id}/bindings/${binding.id}/verify`);
  expect(outcome.result).toBe("verified");
}

/** An agent passport with a proven manifest and trusted evidence of its operator. */
async function currentAgent(caller: Caller, manifest = manifestUrl()) {
  const agent = await caller.createPassport({ family: "agent", bindings: [{ class: "manifest", value: manifest }] });
  await proveManifest(caller, agent.identity_id, manifest);
  await caller.json(
    "POST",
    `/v1/passports/${agent.identity_id}/evidence`,
    await attested(agent.identity_id, evidence("agent.operator_identity")),
  );
  return { id: agent.identity_id as string, manifest };
}

describe("agent action envelope", () => {
  let admin: Caller;
  beforeAll(async () => {
    admin = await Caller.create("admin");
  });

  it("a current agent with fresh evidence for every required claim → view_resolver_proof", async () => {
    const { id, manifest } = await currentAgent(admin);
    for (const target of [manifest, id]) {
      const { status, headers, body } = await envelopeFor(target);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        type: ENVELOPE_TYPE,
        subject: { target, target_type: "agent_manifest" },
        posture: "current",
        result: "proof_current",
        missing_evidence: [],
        recommended_path: "view_resolver_proof",
        resolver_url: `${RESOLVER}/p/${id}`,
        machine_json_url: `${RESOLVER}/api/p/${id}.json`,
        identity_id: id,
        ...ENVELOPE_ASSURANCES,
      });
      expect(body.authority_boundary).toMatch(/grants no authority/);
      expect(body.actions).toContainEqual({
        label: expect.any(String),
        kind: "recheck",
        url: `${RESOLVER}/api/p/${id}.json`,
      });
      expect(headers.get("cache-tag")).toBe(`passport-${id}`);
      expect(headers.get("cache-control")).toContain("max-age");
    }
  });

  it("reports the manifest binding's environment and version, else the passport's, and says nothing when neither does", async () => {
    const manifest = manifestUrl();
    const agent = await admin.createPassport({
      family: "agent",
      environment: "production",
      version: "3.1.0",
      bindings: [{ class: "manifest", value: manifest, environment: "staging" }],
    });
    const id = agent.identity_id as string;
    await proveManifest(admin, id, manifest);
    const byManifest = await envelopeFor(manifest);
    expect(byManifest.body.subject).toEqual({
      target: manifest,
      target_type: "agent_manifest",
      environment: "staging",
      version: "3.1.0",
    });
    const byId = await envelopeFor(id);
    expect(byId.body.subject).toEqual({
      target: id,
      target_type: "agent_manifest",
      environment: "production",
      version: "3.1.0",
    });
    const { id: plain, manifest: plainManifest } = await currentAgent(admin);
    expect((await envelopeFor(plainManifest)).body.subject).toEqual({
      target: plainManifest,
      target_type: "agent_manifest",
    });
    expect((await envelopeFor(plain)).body.subject).toEqual({ target: plain, target_type: "agent_manifest" });
  });

  it("missing evidence → improve_resolver_posture naming the missing claims", async () => {
    const manifest = manifestUrl();
    const agent = await admin.createPassport({ family: "agent", bindings: [{ class: "manifest", value: manifest }] });
    await proveManifest(admin, agent.identity_id, manifest);
    const { body } = await envelopeFor(manifest);
    expect(body).toMatchObject({
      posture: "incomplete",
      result: "missing_evidence",
      missing_evidence: ["agent.operator_identity"],
      recommended_path: "improve_resolver_posture",
    });
  });

  it("stale evidence → improve_resolver_posture naming the stale claim", async () => {
    const manifest = manifestUrl();
    const agent = await admin.createPassport({ family: "agent", bindings: [{ class: "manifest", value: manifest }] });
    await proveManifest(admin, agent.identity_id, manifest);
    await admin.json(
      "POST",
      `/v1/passports/${agent.identity_id}/evidence`,
      await attested(
        agent.identity_id,
        evidence("agent.operator_identity", "2020-06-01T00:00:00Z", "2020-01-01T00:00:00Z"),
      ),
    );
    const { body } = await envelopeFor(manifest);
    expect(body).toMatchObject({
      result: "stale_evidence",
      missing_evidence: ["agent.operator_identity"],
      stale_evidence: ["agent.operator_identity"],
      recommended_path: "improve_resolver_posture",
    });
  });

  it("an unproven manifest with self-written evidence for every claim is never current", async () => {
    const manifest = manifestUrl();
    const agent = await admin.createPassport({ family: "agent", bindings: [{ class: "manifest", value: manifest }] });
    for (const claim of ["agent.operator_identity", "agent.manifest_control"]) {
      await admin.json(
        "POST",
        `/v1/passports/${agent.identity_id}/evidence`,
        evidence(claim, undefined, undefined, "we checked it ourselves"),
      );
    }
    const byId = (await envelopeFor(agent.identity_id)).body;
    expect(byId).toMatchObject({
      posture: "incomplete",
      result: "missing_evidence",
      missing_evidence: ["agent.operator_identity", "agent.manifest_control"],
    });
    // An unproven manifest is not in the manifest index at all.
    expect((await envelopeFor(manifest)).body).toMatchObject({ posture: "no_passport", identity_id: null });
  });

  it("another organisation's unproven claim leaves the holder current and pointing at the holder", async () => {
    const manifest = manifestUrl();
    const holder = await admin.createPassport({ family: "agent", bindings: [{ class: "manifest", value: manifest }] });
    // Before anyone proves the manifest, anyone may claim it.
    const intruder = await Caller.create("admin");
    const claim = await intruder.createPassport({
      family: "agent",
      bindings: [{ class: "manifest", value: manifest }],
    });
    await intruder.json(
      "POST",
      `/v1/passports/${claim.identity_id}/evidence`,
      await attested(claim.identity_id, evidence("agent.manifest_control")),
    );
    await proveManifest(admin, holder.identity_id, manifest);
    await admin.json(
      "POST",
      `/v1/passports/${holder.identity_id}/evidence`,
      await attested(holder.identity_id, evidence("agent.operator_identity")),
    );
    // The intruder's check fails: the manifest names the holder's passport, not the intruder's.
    const outcome = await intruder.json(
      "POST",
      `/v1/passports/${claim.identity_id}/bindings/${claim.bindings[0].id}/verify`,
    );
    expect(outcome.result).toBe("not_proven");
    const { body } = await envelopeFor(manifest);
    expect(body).toMatchObject({
      posture: "current",
      result: "proof_current",
      identity_id: holder.identity_id,
      resolver_url: `${RESOLVER}/p/${holder.identity_id}`,
      organisation: { id: admin.organisation },
    });
    // Once proven, a new claim from another organisation is refused, naming the verified holder.
    const late = await Caller.create("admin");
    const refused = await late.request("POST", "/v1/passports", {
      family: "agent",
      organisation_id: late.organisation,
      bindings: [{ class: "manifest", value: manifest }],
    });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      type: "urn:svc:passport:problem:duplicate-identity",
      existing_identity_id: holder.identity_id,
      verified_holder: { identity_id: holder.identity_id, organisation_id: admin.organisation },
    });
  });

  it("reactivated and not yet re-checked → improve_resolver_posture", async () => {
    const { id, manifest } = await currentAgent(admin);
    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "suspended" });
    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "active" });
    expect((await envelopeFor(manifest)).body).toMatchObject({
      result: "recheck_required",
      recommended_path: "improve_resolver_posture",
    });
  });

  for (const lifecycle of ["suspended", "revoked"] as const) {
    it(`${lifecycle} → repair_resolver_posture`, async () => {
      const { id, manifest } = await currentAgent(admin);
      await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle });
      expect((await envelopeFor(manifest)).body).toMatchObject({
        posture: "needs_repair",
        result: `lifecycle_${lifecycle}`,
        recommended_path: "repair_resolver_posture",
        identity_id: id,
      });
    });
  }

  it("retired → repair_resolver_posture by id; its manifest is no longer claimed", async () => {
    const { id, manifest } = await currentAgent(admin);
    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "retired" });
    expect((await envelopeFor(id)).body).toMatchObject({
      result: "lifecycle_retired",
      recommended_path: "repair_resolver_posture",
    });
    expect((await envelopeFor(manifest)).body).toMatchObject({ result: "not_found", identity_id: null });
  });

  it("degraded → repair_resolver_posture", async () => {
    const { id, manifest } = await currentAgent(admin);
    await admin.json("PATCH", `/v1/passports/${id}/state`, { availability: "degraded" });
    expect((await envelopeFor(manifest)).body).toMatchObject({
      result: "availability_degraded",
      recommended_path: "repair_resolver_posture",
    });
  });

  it("a manifest the passport no longer binds (index behind the record) → repair_resolver_posture", async () => {
    const { id } = await currentAgent(admin);
    const elsewhere = manifestUrl();
    // The index is written after the snapshot; an entry left behind looks like this.
    await env.SNAPSHOTS.put(`${await manifestIndexPrefix(elsewhere)}${id}`, id);
    expect((await envelopeFor(elsewhere)).body).toMatchObject({
      result: "binding_mismatch",
      recommended_path: "repair_resolver_posture",
    });
  });

  it("a manifest two organisations both prove → a genuine conflict, never picking one", async () => {
    const manifest = manifestUrl();
    // Both claim it before either proves it; then both prove it.
    const other = await Caller.create("admin");
    const second = await other.createPassport({ family: "agent", bindings: [{ class: "manifest", value: manifest }] });
    const first = await currentAgent(admin, manifest);
    // The manifest names both passports: both organisations show control of it.
    const url = new URL(manifest);
    await serve(url.hostname, { [url.pathname]: json({ passports: [first.id, second.identity_id] }) });
    const outcome = await other.json(
      "POST",
      `/v1/passports/${second.identity_id}/bindings/${second.bindings[0].id}/verify`,
    );
    expect(outcome.result).toBe("verified");
    const { body } = await envelopeFor(manifest);
    expect(body).toMatchObject({
      posture: "ambiguous",
      result: "conflicting_proof",
      recommended_path: "repair_resolver_posture",
      identity_id: null,
    });
    expect(body.resolver_url).toBeNull();
    // Both histories record the conflict.
    const theirs = await other.json("GET", `/v1/passports/${second.identity_id}/history`);
    expect(theirs.items.at(-1)).toMatchObject({ kind: "binding.verified", detail: { conflicts_with: [first.id] } });
    const ours = await admin.json("GET", `/v1/passports/${first.id}/history`);
    expect(ours.items.at(-1)).toMatchObject({
      kind: "binding.conflict",
      detail: { class: "manifest", value: manifest, also_proven_by: second.identity_id },
    });
  });

  it("a repair answer points ops_action_url at the passport's Dashboard page", async () => {
    const { id, manifest } = await currentAgent(admin);
    await admin.json("PATCH", `/v1/passports/${id}/state`, { availability: "degraded" });
    const { body } = await envelopeFor(manifest);
    expect(body.recommended_path).toBe("repair_resolver_posture");
    expect(body.ops_action_url).toBe(`http://control.test/dashboard/passports/${id}`);
  });

  it("not an agent passport → view_developer_guidance", async () => {
    const api = await admin.createPassport({ family: "api" });
    expect((await envelopeFor(api.identity_id)).body).toMatchObject({
      result: "family_mismatch",
      recommended_path: "view_developer_guidance",
      machine_json_url: `${RESOLVER}/api/p/${api.identity_id}.json`,
    });
  });

  it("an unknown target → view_developer_guidance with no fabricated identity", async () => {
    for (const target of [manifestUrl(), mintIdentityId()]) {
      const { status, body } = await envelopeFor(target);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        posture: "no_passport",
        result: "not_found",
        recommended_path: "view_developer_guidance",
        resolver_url: null,
        machine_json_url: null,
        identity_id: null,
      });
      expect(body.actions.map((a: Body) => a.kind)).toContain("recheck");
    }
  });

  it("answers bad targets with problem+json", async () => {
    for (const target of [
      "",
      "not a url",
      "ftp://agents.example.com/card.json",
      "https://user:pw@a.example.com/c.json",
      "psp_123",
    ]) {
      const response = await env.TEST_RESOLVER.fetch(
        `${RESOLVER}/api/agent-envelope?target=${encodeURIComponent(target)}`,
      );
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect((await response.json<Body>()).type).toBe("urn:svc:passport:problem:invalid-envelope-target");
    }
    const post = await env.TEST_RESOLVER.fetch(`${RESOLVER}/api/agent-envelope?target=x`, { method: "POST" });
    expect(post.status).toBe(405);
  });

  it("writes nothing, whatever it is asked", async () => {
    const manifest = manifestUrl();
    const id = mintIdentityId();
    const { id: agent, manifest: claimed } = await currentAgent(admin);
    const watched = [
      await manifestIndexPrefix(manifest),
      await manifestIndexPrefix(claimed),
      snapshotKey(id),
      snapshotKey(agent),
    ];
    const state = async () =>
      JSON.stringify(
        await Promise.all(
          watched.map(async (prefix) => {
            const { keys } = await env.SNAPSHOTS.list({ prefix });
            return Promise.all(keys.map(async (key) => [key.name, await env.SNAPSHOTS.get(key.name)]));
          }),
        ),
      );
    const before = await state();
    for (const target of [manifest, id, claimed, agent]) {
      for (const method of ["GET", "HEAD", "POST", "PUT", "DELETE"]) {
        await env.TEST_RESOLVER.fetch(`${RESOLVER}/api/agent-envelope?target=${encodeURIComponent(target)}`, {
          method,
          ...(method === "GET" || method === "HEAD" ? {} : { body: "{}" }),
        });
      }
    }
    expect(await state()).toBe(before);
  });
});

describe("the served envelope schema, checked against spec table 2.4", () => {
  const required = [
    "type",
    "version",
    "subject",
    "posture",
    "result",
    "missing_evidence",
    "recommended_path",
    "actions",
    "authority_boundary",
    "local_policy_decides",
    "recheck_before_reliance",
    "no_safety_or_approval_inference",
    "verifier_writes_truth",
    "verifier_activates_proof",
    "verifier_marks_bound",
  ];

  it("requires exactly the spec's required fields, with their types and constants", () => {
    expect([...schema.required].sort()).toEqual([...required].sort());
    const p = schema.properties;
    // The protocol's constants are the spec's values; the schema and the served envelopes take them from there.
    expect(ENVELOPE_TYPE).toBe("svc.agent_action_envelope");
    expect([...RECOMMENDED_PATHS]).toEqual([
      "view_resolver_proof",
      "improve_resolver_posture",
      "repair_resolver_posture",
      "view_developer_guidance",
    ]);
    expect([...ENVELOPE_ACTION_KINDS]).toEqual(["route", "recheck"]);
    expect(ENVELOPE_ASSURANCES).toEqual({
      local_policy_decides: true,
      recheck_before_reliance: true,
      no_safety_or_approval_inference: true,
      verifier_writes_truth: false,
      verifier_activates_proof: false,
      verifier_marks_bound: false,
    });
    expect(p.type).toMatchObject({ type: "string", const: ENVELOPE_TYPE });
    expect(p.version.type).toBe("string");
    expect(p.subject.required.sort()).toEqual(["target", "target_type"]);
    expect(p.subject.properties.target.type).toBe("string");
    expect(p.subject.properties.target_type).toMatchObject({ type: "string", const: "agent_manifest" });
    expect(p.posture.type).toBe("string");
    expect(p.result.type).toBe("string");
    expect(p.missing_evidence).toMatchObject({ type: "array", items: { type: "string" } });
    expect(p.recommended_path.enum).toEqual([...RECOMMENDED_PATHS]);
    const action = p.actions.items;
    expect(action.required.sort()).toEqual(["kind", "label"]);
    expect(action.properties.label.type).toBe("string");
    expect(action.properties.kind.enum).toEqual([...ENVELOPE_ACTION_KINDS]);
    expect(action.required).not.toContain("url");
    for (const nullableString of [action.properties.url, p.resolver_url, p.machine_json_url]) {
      expect([...nullableString.type].sort()).toEqual(["null", "string"]);
    }
    for (const optional of ["resolver_url", "machine_json_url", "ops_action_url", "developer_guidance_url"]) {
      expect(schema.required).not.toContain(optional);
    }
    expect(p.ops_action_url.type).toBe("string");
    expect(p.developer_guidance_url.type).toBe("string");
    expect(p.authority_boundary.type).toBe("string");
    for (const [constant, value] of Object.entries(ENVELOPE_ASSURANCES)) {
      expect(p[constant]).toMatchObject({ type: "boolean", const: value });
    }
    expect(schema.additionalProperties).not.toBe(false);
  });
});
