import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clearRecheckIfPassed } from "../../workers/control/src/binding-checks/queries.ts";
import { settleFinishedReevaluations } from "../../workers/control/src/binding-checks/reevaluation.ts";
import { database } from "../../workers/control/src/db/client.ts";
import { findPassport } from "../../workers/control/src/db/passports.ts";
import { type Body, Caller, resolve } from "../support/api.ts";
import { attested, TRUSTED_AUDITOR } from "../support/attestation.ts";
import { dashboard, verifiedManifest } from "../support/control-fixtures.ts";
import { json, serve } from "../support/hosts.ts";
import { recheckAt } from "../support/rechecks.ts";
import { everyShard, shardOfIdentity } from "../support/shards.ts";

// Reactivation re-evaluates (docs/lifecycle.md#re-evaluation): the re-check flag clears when every
// binding checked before passed a new check and the evidence was renewed, never by a click.

/** An agent passport, created by an admin (lifecycle changes need one), with its manifest verified now. */
function verifiedAgent(admin: Caller) {
  return verifiedManifest(admin, { display_name: "Re-evaluated agent" });
}

async function reactivate(admin: Caller, id: string) {
  await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "suspended", reason: "incident" });
  const reactivated = await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "active" });
  expect(reactivated.state).toMatchObject({ lifecycle: "active", recheck_required: true });
  return reactivated;
}

/** The scheduler's run at `at`: the due checks through the consumer's own function, then the settling of finished re-evaluations. */
async function schedulerRun(at = new Date()) {
  const outcomes = await recheckAt(at);
  for (const shard of everyShard()) await settleFinishedReevaluations(env, database(shard), at);
  return outcomes;
}

async function flagged(id: string): Promise<boolean> {
  return (await resolve(id)).record.state.recheck_required === true;
}

describe("reactivation re-evaluates", () => {
  it("re-runs the binding checks through the scheduler and clears the flag only once they pass, republishing", async () => {
    const admin = await Caller.create("admin");
    const { id, bindingId, manifest } = await verifiedAgent(admin);
    await reactivate(admin, id);
    // Nothing ran in the request: the binding is due for the scheduler, and the flag stays.
    const pending = await admin.json("GET", `/v1/passports/${id}/recheck`);
    expect(pending).toMatchObject({
      identity_id: id,
      recheck_required: true,
      pending: {
        bindings: [{ id: bindingId, value: manifest, verification_state: "verified" }],
        claims: ["agent.manifest_control"],
      },
    });
    expect(Date.parse(pending.pending.bindings[0].next_check_at)).toBeLessThanOrEqual(Date.now());
    await settleFinishedReevaluations(env, database(await shardOfIdentity(id)));
    expect(await flagged(id)).toBe(true);

    const outcomes = await schedulerRun();
    expect(outcomes.get(bindingId)).toBe("verified");
    const { record } = await resolve(id);
    expect(record.state.recheck_required).toBeUndefined();
    const history = (await admin.json("GET", `/v1/passports/${id}/history`)).items as Body[];
    expect(history.at(-1)).toMatchObject({ kind: "state.rechecked", actor: "passport-service" });
    expect(history.at(-2)).toMatchObject({ kind: "binding.verified" });
    expect(record.record_version).toBe(history.at(-1)?.record_version);
    const after = await admin.json("GET", `/v1/passports/${id}/recheck`);
    expect(after).toMatchObject({ recheck_required: false, since: null, pending: { bindings: [], claims: [] } });
  });

  it("a host that does not answer keeps the flag pending, neither passed nor failed; it clears once the host answers", async () => {
    const admin = await Caller.create("admin");
    const { host, id, bindingId } = await verifiedAgent(admin);
    await reactivate(admin, id);
    await serve(host, { "/card.json": { status: 503 } });
    expect((await schedulerRun()).get(bindingId)).toBe("unreachable");
    expect(await flagged(id)).toBe(true);
    const pending = await admin.json("GET", `/v1/passports/${id}/recheck`);
    expect(pending.pending.bindings).toEqual([
      expect.objectContaining({ id: bindingId, verification_state: "verified" }),
    ]);
    expect(pending.pending.bindings[0].last_check_result).toContain("answered HTTP 503");
    // Not a failure either: the binding keeps its proof.
    expect((await resolve(id)).record.bindings[0].verification.state).toBe("verified");

    // The Dashboard says what is pending and why.
    const page = await dashboard(admin, `/dashboard/passports/${id}`);
    const html = await page.text();
    expect(html).toContain("Bindings awaiting a passing check");
    expect(html).toMatch(/not answered yet \([^)]*answered HTTP 503/);
    expect(html).toContain("Claims awaiting fresh evidence");
    expect(html).toContain("<code>agent.manifest_control</code>");

    await serve(host, { "/card.json": json({ passport: id }) });
    const retry = new Date(Date.parse(pending.pending.bindings[0].next_check_at));
    expect((await schedulerRun(retry)).get(bindingId)).toBe("verified");
    expect(await flagged(id)).toBe(false);
  });

  it("an answer that contradicts the proof keeps it pending as failed, until the binding is proven again or removed", async () => {
    const admin = await Caller.create("admin");
    const { host, id, bindingId } = await verifiedAgent(admin);
    await reactivate(admin, id);
    await serve(host, { "/card.json": json({ passport: "someone else" }) });
    expect((await schedulerRun()).get(bindingId)).toBe("mismatch");
    expect(await flagged(id)).toBe(true);
    const pending = await admin.json("GET", `/v1/passports/${id}/recheck`);
    expect(pending.pending.bindings).toEqual([
      expect.objectContaining({ id: bindingId, verification_state: "lapsed" }),
    ]);

    const current = await admin.json("GET", `/v1/passports/${id}`);
    await admin.request("DELETE", `/v1/passports/${id}/bindings/${bindingId}`, undefined, {
      "if-match": `"v${current.record_version}"`,
    });
    // Its observed evidence went with it, so nothing from before is left to renew.
    await schedulerRun();
    expect(await flagged(id)).toBe(false);
  });

  it("requires fresh evidence for the claims that had evidence before: old evidence, even re-sent, does not count", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport({ display_name: "Audited API" });
    const audit = {
      claim: "api.pen_test",
      source: TRUSTED_AUDITOR,
      scope: "the whole API",
      observed_at: new Date(Date.now() - 30 * 86_400_000).toISOString(),
    };
    await admin.json("POST", `/v1/passports/${id}/evidence`, await attested(id, audit));
    await admin.json("POST", `/v1/passports/${id}/evidence`, {
      claim: "org.contact",
      source: "our records",
      scope: "support desk",
      observed_at: new Date(Date.now() - 86_400_000).toISOString(),
    });
    await reactivate(admin, id);
    await schedulerRun();
    expect(await flagged(id)).toBe(true);
    expect((await admin.json("GET", `/v1/passports/${id}/recheck`)).pending).toEqual({
      bindings: [],
      claims: ["api.pen_test", "org.contact"],
    });

    // The same audit sent again is still evidence observed before the reactivation.
    await admin.json("POST", `/v1/passports/${id}/evidence`, await attested(id, audit));
    await schedulerRun();
    expect(await flagged(id)).toBe(true);

    // A new attested audit renews one claim; a newly asserted item the other.
    const fresh = { ...audit, observed_at: new Date().toISOString() };
    await admin.json("POST", `/v1/passports/${id}/evidence`, await attested(id, fresh));
    await schedulerRun();
    expect((await admin.json("GET", `/v1/passports/${id}/recheck`)).pending.claims).toEqual(["org.contact"]);
    await admin.json("POST", `/v1/passports/${id}/evidence`, {
      claim: "org.contact",
      source: "our records",
      scope: "support desk",
      observed_at: new Date().toISOString(),
    });
    await schedulerRun();
    expect(await flagged(id)).toBe(false);
  });

  it("the old 'I re-checked' path no longer clears the flag: the API refuses it, the Dashboard asks for the checks", async () => {
    const admin = await Caller.create("admin");
    const { host, id, bindingId } = await verifiedAgent(admin);
    await reactivate(admin, id);
    await serve(host, { "/card.json": { status: 503 } });

    const refused = await admin.request("PATCH", `/v1/passports/${id}/state`, { recheck_completed: true });
    expect(refused.status).toBe(409);
    const problem = (await refused.json()) as Body;
    expect(problem).toMatchObject({
      type: "urn:svc:passport:problem:recheck-pending",
      recheck_url: `/v1/passports/${id}/recheck`,
    });
    expect(problem.detail).toContain("clears by itself");
    // Beside a lifecycle or availability change too: nothing of the request is written.
    const before = await admin.json("GET", `/v1/passports/${id}`);
    const mixed = await admin.request("PATCH", `/v1/passports/${id}/state`, {
      availability: "degraded",
      recheck_completed: true,
    });
    expect(mixed.status).toBe(409);
    expect((await admin.json("GET", `/v1/passports/${id}`)).record_version).toBe(before.record_version);
    expect(await flagged(id)).toBe(true);

    // The Dashboard's button asks for the pending checks now; the flag stays until they pass.
    const page = await dashboard(admin, `/dashboard/passports/${id}`);
    const html = await page.text();
    expect(html).not.toContain("I re-checked");
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
    const posted = await dashboard(admin, `/dashboard/passports/${id}/recheck`, { csrf });
    expect(posted.status).toBe(303);
    expect(await flagged(id)).toBe(true);
    const shown = await (await dashboard(admin, posted.headers.get("location") ?? "")).text();
    expect(shown).toContain("Re-check requested");
    expect(shown).toContain("Re-check pending.");

    // The API's "re-check now" makes a binding whose retry is hours away due at once.
    await schedulerRun();
    const backedOff = (await admin.json("GET", `/v1/passports/${id}/recheck`)).pending.bindings[0];
    expect(Date.parse(backedOff.next_check_at)).toBeGreaterThan(Date.now());
    const asked = await admin.json("POST", `/v1/passports/${id}/recheck`, undefined, 202);
    expect(asked.scheduled).toBe(1);
    expect(Date.parse(asked.pending.bindings[0].next_check_at)).toBeLessThanOrEqual(Date.now());
    await serve(host, { "/card.json": json({ passport: id }) });
    expect((await schedulerRun()).get(bindingId)).toBe("verified");
    expect(await flagged(id)).toBe(false);
  });

  it("a change racing the flag's clearing wins: the clearing writes nothing, fails nothing, and the next run clears it", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport({ display_name: "Raced re-evaluation" });
    await reactivate(admin, id);
    const db = database(await shardOfIdentity(id));
    const read = await findPassport(db, id);
    if (!read?.recheckSince) throw new Error("not flagged");
    // Another change takes the next version after the read.
    await admin.json("PATCH", `/v1/passports/${id}/state`, { availability: "degraded" });
    const history = async () => (await admin.json("GET", `/v1/passports/${id}/history`)).items as Body[];
    const before = await history();
    const cleared = await clearRecheckIfPassed(
      db,
      { id, version: read.recordVersion, since: read.recheckSince },
      { actor: "passport-service", at: new Date().toISOString(), detail: {} },
    );
    expect(cleared).toBe(false);
    expect(await history()).toEqual(before);
    expect(await flagged(id)).toBe(true);
    expect(await settleFinishedReevaluations(env, db)).toBeGreaterThanOrEqual(1);
    expect(await flagged(id)).toBe(false);
  });

  it("viewers see what is pending but cannot ask for the checks", async () => {
    const admin = await Caller.create("admin");
    const viewer = await Caller.create("viewer", admin.organisation);
    const { id } = await verifiedAgent(admin);
    await reactivate(admin, id);
    expect((await viewer.json("GET", `/v1/passports/${id}/recheck`)).recheck_required).toBe(true);
    expect((await viewer.request("POST", `/v1/passports/${id}/recheck`)).status).toBe(403);
  });
});
