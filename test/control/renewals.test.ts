import { describe, expect, it } from "vitest";
import { type Body, Caller, resolve } from "../support/api.ts";
import { verifiedManifest } from "../support/control-fixtures.ts";
import { json, serve, uniqueHost } from "../support/hosts.ts";
import { recheckAt } from "../support/rechecks.ts";
import { shardOfIdentity } from "../support/shards.ts";

// Renewals (docs/bindings.md, "Renewals"): a successful check that changes nothing a consumer relies
// on is held in D1 (no record version, event, evidence or publication row); a renewal the record
// needs, and every lapse, is published at once.

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** The rows a record version costs in D1, for one passport. */
async function rowsOf(id: string) {
  const shard = await shardOfIdentity(id);
  const count = async (table: string) =>
    (await shard.prepare(`SELECT count(*) AS n FROM ${table} WHERE passport_id = ?`).bind(id).first<{ n: number }>())
      ?.n;
  const version = await shard
    .prepare("SELECT record_version AS v FROM passports WHERE id = ?")
    .bind(id)
    .first<{ v: number }>();
  return {
    version: version?.v,
    events: await count("events"),
    publications: await count("publications"),
    evidence: await count("evidence"),
  };
}

/** Adds an MCP surface bound at a host of its own to the passport and proves it; returns its binding id. */
async function provenSurface(caller: Caller, id: string): Promise<string> {
  const host = uniqueHost("mcp");
  await serve(host, { "/server.json": json({ name: "Agent", passport: id }) });
  const added = await caller.json("POST", `/v1/passports/${id}/bindings`, {
    class: "mcp_surface",
    value: `https://${host}/server.json`,
  });
  const bindingId = added.bindings.find((b: Body) => b.class === "mcp_surface").id as string;
  expect((await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`)).result).toBe("verified");
  return bindingId;
}

async function bindingView(caller: Caller, id: string, bindingId: string): Promise<Body> {
  const passport = await caller.json("GET", `/v1/passports/${id}`);
  return passport.bindings.find((b: Body) => b.id === bindingId);
}

describe("renewals", () => {
  it("a member's check that proves again what the record states is held in D1: no version, event, evidence or publication", async () => {
    const caller = await Caller.create("editor");
    const { id, bindingId, proof } = await verifiedManifest(caller);
    const before = await rowsOf(id);
    const published = (await resolve(id)).record;

    const again = await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
    expect(again.result).toBe("verified");

    expect(await rowsOf(id)).toEqual(before);
    expect((await resolve(id)).record).toEqual(published);
    const binding = await bindingView(caller, id, bindingId);
    // The proof the record states stands; the check itself is on the binding's log.
    expect(binding.verification).toEqual(proof.verification);
    expect(binding.checks.map((c: Body) => c.outcome)).toEqual(["verified", "verified"]);
    expect(Date.parse(binding.last_check.at)).toBeGreaterThanOrEqual(Date.parse(proof.verification.verified_at));
    // Still due before the published proof's re-check window, so the record never runs out.
    expect(Date.parse(binding.next_check_at)).toBeLessThanOrEqual(Date.parse(proof.verification.fresh_until) - 2 * DAY);
  });

  it("a scheduled check before the published proof is due is held; the one at its window publishes a new version", async () => {
    const caller = await Caller.create("editor");
    const { id, bindingId, proof } = await verifiedManifest(caller);
    const before = await rowsOf(id);

    // Brought forward (as a reactivation or an operator would), the check proves what the record states.
    const early = new Date(Date.parse(proof.verification.verified_at) + DAY);
    await (await shardOfIdentity(id))
      .prepare("UPDATE bindings SET next_check_at = ? WHERE id = ?")
      .bind(early.toISOString(), bindingId)
      .run();
    expect((await recheckAt(early)).get(bindingId)).toBe("verified");
    expect(await rowsOf(id)).toEqual(before);
    const held = await bindingView(caller, id, bindingId);
    expect(held.verification).toEqual(proof.verification);
    const due = Date.parse(held.next_check_at);
    expect(due).toBeLessThanOrEqual(Date.parse(proof.verification.fresh_until) - 2 * DAY);
    expect(due).toBeGreaterThanOrEqual(Date.parse(proof.verification.fresh_until) - 2 * DAY - 6 * HOUR);

    // At the window the renewal is what keeps the record's proof current: it is published.
    expect((await recheckAt(new Date(due))).get(bindingId)).toBe("verified");
    const after = await rowsOf(id);
    expect(after).toEqual({
      version: (before.version ?? 0) + 1,
      events: (before.events ?? 0) + 1,
      publications: (before.publications ?? 0) + 1,
      evidence: (before.evidence ?? 0) + 1,
    });
    const renewed = (await resolve(id)).record.bindings[0].verification;
    expect(renewed.verified_at).toBe(new Date(due).toISOString());
    expect(Date.parse(renewed.fresh_until)).toBe(due + 7 * DAY);
  });

  it("a lapse is published at once, even while the published proof is far from its window", async () => {
    const caller = await Caller.create("editor");
    const { host, id, bindingId, proof } = await verifiedManifest(caller);
    const before = await rowsOf(id);
    await serve(host, { "/card.json": json({ passport: "someone else" }) });

    const check = await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
    expect(check.result).toBe("not_proven");

    const after = await rowsOf(id);
    expect(after.version).toBe((before.version ?? 0) + 1);
    expect(after.events).toBe((before.events ?? 0) + 1);
    expect(after.publications).toBe((before.publications ?? 0) + 1);
    const { record } = await resolve(id);
    expect(record.bindings[0].verification).toMatchObject({
      state: "lapsed",
      verified_at: proof.verification.verified_at,
    });
    expect(record.evidence).toEqual([]);
  });

  it("a renewal is published when the record's proof no longer stands: its evidence withdrawn", async () => {
    const caller = await Caller.create("editor");
    const { id, bindingId, proof } = await verifiedManifest(caller);
    await caller.json("DELETE", `/v1/passports/${id}/evidence/${proof.verification.evidence}`);
    const before = await rowsOf(id);

    const again = await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
    expect(again.result).toBe("verified");

    expect((await rowsOf(id)).version).toBe((before.version ?? 0) + 1);
    const { record } = await resolve(id);
    const verification = record.bindings[0].verification;
    expect(verification.evidence).not.toBe(proof.verification.evidence);
    expect(record.evidence.map((e: Body) => e.id)).toEqual([verification.evidence]);
  });

  it("a scheduled run renews a passport's proofs due together in one version, and from then on at one time", async () => {
    const caller = await Caller.create("editor");
    const { id, bindingId, proof } = await verifiedManifest(caller);
    const surfaceId = await provenSurface(caller, id);
    const before = await rowsOf(id);

    // Both proofs come due within the same six hours; one run takes both.
    const dues = [proof.next_check_at, (await bindingView(caller, id, surfaceId)).next_check_at].map(Date.parse);
    const at = new Date(Math.max(...dues));
    const outcomes = await recheckAt(at);
    expect([outcomes.get(bindingId), outcomes.get(surfaceId)]).toEqual(["verified", "verified"]);
    expect(await rowsOf(id)).toEqual({
      version: (before.version ?? 0) + 1,
      events: (before.events ?? 0) + 1,
      publications: (before.publications ?? 0) + 1,
      evidence: (before.evidence ?? 0) + 2,
    });
    const manifest = await bindingView(caller, id, bindingId);
    const mcp = await bindingView(caller, id, surfaceId);
    expect(manifest.verification.verified_at).toBe(at.toISOString());
    expect(mcp.verification.verified_at).toBe(at.toISOString());
    expect(mcp.next_check_at).toBe(manifest.next_check_at);
    const { record } = await resolve(id);
    expect(record.bindings.map((b: Body) => b.verification.fresh_until)).toEqual([
      new Date(at.getTime() + 7 * DAY).toISOString(),
      new Date(at.getTime() + 7 * DAY).toISOString(),
    ]);

    // From then on they come due together: one version per renewal for the passport.
    const next = new Date(Date.parse(manifest.next_check_at));
    const again = await recheckAt(next);
    expect([again.get(bindingId), again.get(surfaceId)]).toEqual(["verified", "verified"]);
    expect((await rowsOf(id)).version).toBe((before.version ?? 0) + 2);
  });

  it("a proof that fails in the same run is not renewed with the others; its own check lapses it, published", async () => {
    const caller = await Caller.create("editor");
    const { id, bindingId, proof } = await verifiedManifest(caller);
    const surfaceId = await provenSurface(caller, id);
    const surface = await bindingView(caller, id, surfaceId);
    await serve(new URL(surface.value).host, { "/server.json": json({ name: "Agent", passport: "someone else" }) });
    const before = await rowsOf(id);

    const at = new Date(Math.max(Date.parse(proof.next_check_at), Date.parse(surface.next_check_at)));
    const outcomes = await recheckAt(at);
    expect([outcomes.get(bindingId), outcomes.get(surfaceId)].sort()).toEqual(["mismatch", "verified"]);
    // The renewal and the lapse: two versions, the lapse published.
    expect((await rowsOf(id)).version).toBe((before.version ?? 0) + 2);
    const { record } = await resolve(id);
    expect(record.bindings.map((b: Body) => [b.class, b.verification.state])).toEqual([
      ["manifest", "verified"],
      ["mcp_surface", "lapsed"],
    ]);
  });
});
