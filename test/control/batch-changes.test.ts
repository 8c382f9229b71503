import { describe, expect, it } from "vitest";
import { type Body, Caller, resolve, uniqueEndpoint } from "../support/api.ts";
import { attested, TRUSTED_AUDITOR } from "../support/attestation.ts";
import { shardOfIdentity } from "../support/shards.ts";

// The batch API changes what a deploy pipeline changes (docs/publication.md#batches): bindings,
// evidence, environment and version, lifecycle; each item with its single request's checks, role
// and result, and nothing written for an item that is refused.

type Result = { status: number; passport: Body | null; problem: Body | null };

function batch(caller: Caller, items: unknown[]): Promise<{ results: Result[] }> {
  return caller.json("POST", "/v1/passports/batch", { items });
}

async function events(id: string) {
  const { results } = await (await shardOfIdentity(id))
    .prepare("SELECT kind, record_version, actor, detail FROM events WHERE passport_id = ? ORDER BY record_version")
    .bind(id)
    .all<{ kind: string; record_version: number; actor: string; detail: string }>();
  return results;
}

const evidence = (claim: string) => ({
  claim,
  source: "deploy pipeline",
  scope: "build 1234",
  observed_at: new Date().toISOString(),
});

describe("POST /v1/passports/batch: a deploy pipeline's changes", () => {
  it("adds and removes bindings and evidence and sets environment and version, each item answered on its own; a refused item writes nothing", async () => {
    const admin = await Caller.create("admin");
    const editor = await Caller.create("editor", admin.organisation);
    const old = uniqueEndpoint();
    const created = await admin.createPassport({
      display_name: "Payments",
      bindings: [{ class: "endpoint", value: old }],
    });
    const id = created.identity_id as string;
    const oldBinding = created.bindings[0].id as string;
    const withEvidence = await admin.json("POST", `/v1/passports/${id}/evidence`, evidence("build.provenance"));
    const oldEvidence = withEvidence.evidence[0].id as string;
    const other = await admin.createPassport({ display_name: "Other" });
    const before = await events(other.identity_id);

    const next = uniqueEndpoint();
    const { results } = await batch(editor, [
      { add_binding: { identity_id: id, binding: { class: "endpoint", value: next, label: "v2" } } },
      { remove_binding: { identity_id: id, binding_id: oldBinding } },
      { add_evidence: { identity_id: id, evidence: evidence("build.provenance") } },
      { withdraw_evidence: { identity_id: id, evidence_id: oldEvidence } },
      { change_state: { identity_id: id, state: { environment: "production", version: "2.4.1" } } },
      // Refused beside them: the binding exists, the evidence is gone, the version read is stale,
      // the passport is not theirs to see, and a class an API passport cannot hold.
      { add_binding: { identity_id: id, binding: { class: "endpoint", value: next } } },
      { withdraw_evidence: { identity_id: id, evidence_id: oldEvidence } },
      { change_state: { identity_id: other.identity_id, if_match: '"v0"', state: { version: "9" } } },
      { add_binding: { identity_id: "psp_00000000000000000000000000", binding: { class: "endpoint", value: next } } },
      { add_binding: { identity_id: other.identity_id, binding: { class: "manifest", value: `${next}/card.json` } } },
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 409, 404, 412, 404, 400]);
    expect(results[5]?.problem).toMatchObject({ type: "urn:svc:passport:problem:binding-exists" });
    expect(results[6]?.problem?.detail).toContain("no current evidence with that id");
    expect(results[7]?.problem).toMatchObject({ type: "urn:svc:passport:problem:precondition-failed" });
    expect(results[9]?.problem?.detail).toContain("manifest bindings are not available to api passports");

    // Each accepted item is its own version and history event, with the single request's event.
    const after = results[4]?.passport as Body;
    expect(after.bindings.map((b: Body) => [b.value, b.label])).toEqual([[next, "v2"]]);
    expect(after.evidence.map((e: Body) => e.claim)).toEqual(["build.provenance"]);
    expect(after.evidence[0].id).not.toBe(oldEvidence);
    expect(after.state).toMatchObject({ environment: "production", version: "2.4.1" });
    expect((await events(id)).slice(-5).map((e) => [e.kind, e.actor])).toEqual([
      ["binding.added", editor.subject],
      ["binding.removed", editor.subject],
      ["evidence.added", editor.subject],
      ["evidence.withdrawn", editor.subject],
      ["state.changed", editor.subject],
    ]);
    // The refused items wrote nothing: the other passport has no new event.
    expect(await events(other.identity_id)).toEqual(before);

    // Published once, as the last accepted item left it.
    const { record } = await resolve(id);
    expect(record.record_version).toBe(after.record_version);
    expect(record.state).toMatchObject({ environment: "production", version: "2.4.1" });
    expect(record.bindings.map((b: Body) => b.value)).toEqual([next]);
  });

  it("lifecycle with the single request's role and reason rules: an editor's lifecycle item is refused beside their accepted items", async () => {
    const admin = await Caller.create("admin");
    const editor = await Caller.create("editor", admin.organisation);
    const viewer = await Caller.create("viewer", admin.organisation);
    const a = (await admin.createPassport({ display_name: "A" })).identity_id as string;
    const b = (await admin.createPassport({ display_name: "B" })).identity_id as string;

    const byEditor = await batch(editor, [
      { change_state: { identity_id: a, state: { lifecycle: "suspended", reason: "incident" } } },
      { change_state: { identity_id: a, state: { availability: "degraded" } } },
    ]);
    expect(byEditor.results.map((r) => r.status)).toEqual([403, 200]);
    expect(byEditor.results[1]?.passport?.state).toMatchObject({ lifecycle: "active", availability: "degraded" });
    expect(
      (await batch(viewer, [{ change_state: { identity_id: a, state: { version: "2" } } }])).results[0]?.status,
    ).toBe(403);

    const byAdmin = await batch(admin, [
      { change_state: { identity_id: a, state: { lifecycle: "suspended", reason: "rotating keys" } } },
      { change_state: { identity_id: b, state: { lifecycle: "active" } } },
      { change_state: { identity_id: a, state: { lifecycle: "active" } } },
      { change_state: { identity_id: a, state: { recheck_completed: true } } },
      { change_state: { identity_id: b, state: { lifecycle: "revoked", reason: "compromised" } } },
    ]);
    expect(byAdmin.results.map((r) => r.status)).toEqual([200, 409, 200, 409, 200]);
    expect(byAdmin.results[1]?.problem).toMatchObject({
      type: "urn:svc:passport:problem:invalid-transition",
      current: "active",
    });
    // Reactivation in a batch is the single request's: the re-check flag, cleared only by the checks.
    expect(byAdmin.results[2]?.passport?.state).toMatchObject({ lifecycle: "active", recheck_required: true });
    expect(byAdmin.results[3]?.problem).toMatchObject({ type: "urn:svc:passport:problem:recheck-pending" });
    expect((await resolve(a)).record.state.recheck_required).toBe(true);
    const history = await events(a);
    expect(history.map((e) => e.kind)).toEqual([
      "passport.created",
      "state.changed",
      "state.lifecycle_changed",
      "state.reactivated",
    ]);
    const suspended = history.find((e) => e.kind === "state.lifecycle_changed" && e.actor === admin.subject);
    expect(JSON.parse(suspended?.detail ?? "{}")).toMatchObject({ reason: "rotating keys" });
    expect((await resolve(b)).record.state.lifecycle).toBe("revoked");
  });

  it("evidence items carry the single request's attestation check", async () => {
    const editor = await Caller.create("editor");
    const { identity_id: id } = await editor.createPassport({ family: "agent", display_name: "Agent" });
    const audit = {
      claim: "agent.review",
      source: TRUSTED_AUDITOR,
      scope: "all tools",
      observed_at: new Date().toISOString(),
    };
    const { results } = await batch(editor, [
      { add_evidence: { identity_id: id, evidence: audit } },
      { add_evidence: { identity_id: id, evidence: await attested(id, audit) } },
    ]);
    expect(results.map((r) => r.status)).toEqual([400, 200]);
    expect(results[0]?.problem).toMatchObject({ type: "urn:svc:passport:problem:attestation-invalid" });
    expect(results[1]?.passport?.evidence).toEqual([
      expect.objectContaining({ claim: "agent.review", trusted_source: true }),
    ]);
  });

  it("an item its schema refuses refuses the request, naming the item, before anything is written", async () => {
    const editor = await Caller.create("editor");
    const { identity_id: id } = await editor.createPassport({ family: "agent", display_name: "Unchanged" });
    const response = await editor.request("POST", "/v1/passports/batch", {
      items: [
        { change_state: { identity_id: id, state: { environment: "staging" } } },
        { add_binding: { identity_id: id, binding: { class: "manifest", value: "not a url" } } },
      ],
    });
    expect(response.status).toBe(400);
    const problem = (await response.json()) as Body;
    expect(JSON.stringify(problem.errors)).toContain("items.1");
    expect((await editor.json("GET", `/v1/passports/${id}`)).record_version).toBe(1);
  });
});
