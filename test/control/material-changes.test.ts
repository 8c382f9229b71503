import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { settleFinishedReevaluations } from "../../workers/control/src/binding-checks/reevaluation.ts";
import { database } from "../../workers/control/src/db/client.ts";
import { type Body, Caller, resolve } from "../support/api.ts";
import { verifiedManifest } from "../support/control-fixtures.ts";
import { recheckAt } from "../support/rechecks.ts";
import { shardOfIdentity } from "../support/shards.ts";

// Spec 3 "reactivation / change": which material changes start a re-evaluation
// (docs/lifecycle.md#what-starts-a-re-evaluation). Each test changes its own passport, since one
// passport's publications are spaced by the publication sequencer.

async function flagged(id: string): Promise<boolean> {
  return (await resolve(id)).record.state.recheck_required === true;
}

describe("spec 3: a material change starts a re-evaluation", () => {
  it("a responsibility transfer sets recheck_required, makes the proven binding due, and clears once it passes", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const home = await Caller.create("owner", undefined, subject);
    const target = await Caller.create("owner", undefined, subject);
    const { id, bindingId } = await verifiedManifest(home, { display_name: "Moving agent" });

    const moved = await home.json("POST", `/v1/passports/${id}/transfer`, {
      organisation_id: target.organisation,
      reason: "The platform team now answers for this agent",
    });
    expect(moved.organisation.id).toBe(target.organisation);
    expect(moved.state.recheck_required).toBe(true);
    expect(await flagged(id)).toBe(true);
    const pending = await target.json("GET", `/v1/passports/${id}/recheck`);
    expect(pending).toMatchObject({ recheck_required: true, pending: { bindings: [{ id: bindingId }] } });
    // Nothing clears it before the check ran.
    await settleFinishedReevaluations(env, database(await shardOfIdentity(id)));
    expect(await flagged(id)).toBe(true);

    expect((await recheckAt(new Date())).get(bindingId)).toBe("verified");
    expect(await flagged(id)).toBe(false);
    const history = (await target.json("GET", `/v1/passports/${id}/history`)).items as Body[];
    expect(history.map((e) => e.kind)).toContain("responsibility.changed");
    expect(history.at(-1)).toMatchObject({ kind: "state.rechecked", actor: "passport-service" });
  });

  it("naming a separate operator sets recheck_required", async () => {
    const owner = await Caller.create("owner");
    const { id } = await verifiedManifest(owner, { display_name: "Operated agent" });
    const hosting = await owner.json("POST", "/v1/organisations", { name: "Example Hosting" }, 201);
    const updated = await owner.json("PATCH", `/v1/passports/${id}`, { operator_organisation_id: hosting.id });
    expect(updated.operator).toEqual({ id: hosting.id, name: "Example Hosting" });
    expect(updated.state.recheck_required).toBe(true);
    expect(await flagged(id)).toBe(true);
  });

  it("changing the relationship to the object sets recheck_required", async () => {
    const owner = await Caller.create("owner");
    const { id } = await verifiedManifest(owner, { display_name: "Agent we operate" });
    const updated = await owner.json("PATCH", `/v1/passports/${id}`, { relationship: "operator" });
    expect(updated.state.recheck_required).toBe(true);
  });

  it("context changes (display name, environment, version) are not material: no re-evaluation", async () => {
    const owner = await Caller.create("owner");
    const named = await verifiedManifest(owner, { display_name: "Renamed agent" });
    const renamed = await owner.json("PATCH", `/v1/passports/${named.id}`, { display_name: "Agent, renamed" });
    expect(renamed.state.recheck_required).toBe(false);
    const versioned = await verifiedManifest(owner, { display_name: "Versioned agent" });
    const changed = await owner.json("PATCH", `/v1/passports/${versioned.id}/state`, {
      environment: "staging",
      version: "2026-11",
    });
    expect(changed.state.recheck_required).toBe(false);
    expect(await flagged(versioned.id)).toBe(false);
  });
});
