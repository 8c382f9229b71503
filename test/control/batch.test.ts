import { env } from "cloudflare:workers";
import { historyPrefix } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { drainOutbox } from "../../workers/control/src/publication/publish.ts";
import { type Body, Caller, resolve, uniqueEndpoint } from "../support/api.ts";
import { withSequencerEnv } from "../support/publication-sequencer.ts";
import { shardOfIdentity } from "../support/shards.ts";

type Result = { status: number; passport: Body | null; problem: Body | null };

function batch(caller: Caller, items: unknown[]): Promise<{ results: Result[] }> {
  return caller.json("POST", "/v1/passports/batch", { items });
}

async function historyEntries(id: string) {
  const { keys } = await env.SNAPSHOTS.list<{ record_version: number; digest: string; previous_digest?: string }>({
    prefix: historyPrefix(id),
  });
  return keys.map((key) => key.metadata);
}

async function events(id: string) {
  const { results } = await (await shardOfIdentity(id))
    .prepare("SELECT kind, record_version, actor FROM events WHERE passport_id = ? ORDER BY record_version")
    .bind(id)
    .all<{ kind: string; record_version: number; actor: string }>();
  return results;
}

describe("POST /v1/passports/batch", () => {
  it("answers each item on its own, keeps every change's history, and publishes each passport once, chained", async () => {
    const owner = await Caller.create("owner");
    const stranger = await Caller.create("owner");
    const existing = await owner.createPassport({ display_name: "Before" });
    const foreign = await stranger.createPassport({ display_name: "Not yours" });
    const id = existing.identity_id;
    const endpoint = uniqueEndpoint();
    const { results } = await batch(owner, [
      { update: { identity_id: id, display_name: "First" } },
      { update: { identity_id: id, display_name: "Second" } },
      {
        create: {
          family: "api",
          organisation_id: owner.organisation,
          bindings: [{ class: "endpoint", value: endpoint }],
        },
      },
      { update: { identity_id: id, if_match: '"v1"', display_name: "Stale" } },
      { update: { identity_id: foreign.identity_id, display_name: "Taken over" } },
      { create: { family: "api", organisation_id: stranger.organisation, display_name: "Not mine" } },
      {
        create: {
          family: "api",
          organisation_id: owner.organisation,
          bindings: [{ class: "endpoint", value: endpoint }],
        },
      },
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 201, 412, 404, 404, 409]);
    expect(results[3]?.problem).toMatchObject({
      type: expect.stringContaining("precondition-failed"),
      current_etag: '"v3"',
    });
    expect(results[6]?.problem?.existing_identity_id).toBe(results[2]?.passport?.identity_id);
    expect(results[1]?.passport).toMatchObject({ display_name: "Second", record_version: 3 });
    expect(results[1]?.passport?.publication).toEqual({
      status: "published",
      next_attempt_at: null,
      status_url: `${env.RESOLVER_BASE_URL}/api/p/${results[1]?.passport?.identity_id}/status`,
    });
    // The first update's answer shows the version it committed, already superseded by the published one.
    expect(results[0]?.passport?.record_version).toBe(2);

    // Every change has its history event; the publication coalesced versions 2 and 3 into one entry
    // that chains to version 1's.
    expect((await events(id)).map((e) => [e.kind, e.record_version, e.actor])).toEqual([
      ["passport.created", 1, owner.subject],
      ["display.updated", 2, owner.subject],
      ["display.updated", 3, owner.subject],
    ]);
    const entries = await historyEntries(id);
    expect(entries.map((e) => e?.record_version)).toEqual([1, 3]);
    expect(entries[1]?.previous_digest).toBe(entries[0]?.digest);
    const { record } = await resolve(id);
    expect(record).toMatchObject({ record_version: 3, display_name: "Second", previous_digest: entries[0]?.digest });

    const created = results[2]?.passport;
    expect((await resolve(created?.identity_id)).record.record_version).toBe(1);
    // The other organisation's passport is untouched.
    expect((await stranger.json("GET", `/v1/passports/${foreign.identity_id}`)).record_version).toBe(1);
    expect((await resolve(foreign.identity_id)).record.display_name).toBe("Not yours");
  });

  it("leaves a failed publication in the outbox, says pending, and the drain publishes it", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const failingKv = {
      ...env.SNAPSHOTS,
      put: async () => {
        throw new Error("KV unavailable");
      },
    } as unknown as KVNamespace;
    const { results } = await withSequencerEnv(id, { SNAPSHOTS: failingKv }, () =>
      batch(owner, [{ update: { identity_id: id, display_name: "Deferred in a batch" } }]),
    );
    expect(results[0]?.passport?.publication).toMatchObject({ status: "pending", next_attempt_at: expect.any(String) });
    const row = await (await shardOfIdentity(id))
      .prepare("SELECT record_version FROM outbox WHERE passport_id = ?")
      .bind(id)
      .first();
    expect(row).toEqual({ record_version: 2 });
    expect((await resolve(id)).record.record_version).toBe(1);

    await drainOutbox(env, new Date(Date.now() + 60_000));
    expect((await resolve(id)).record).toMatchObject({ record_version: 2, display_name: "Deferred in a batch" });
  });

  it(`refuses more than 100 items, and an empty batch, as a whole`, async () => {
    const owner = await Caller.create("owner");
    const item = { create: { family: "api", organisation_id: owner.organisation, display_name: "One of many" } };
    expect((await owner.request("POST", "/v1/passports/batch", { items: Array(101).fill(item) })).status).toBe(400);
    expect((await owner.request("POST", "/v1/passports/batch", { items: [] })).status).toBe(400);
    const list = await owner.json("GET", `/v1/passports?organisation_id=${owner.organisation}`);
    expect(list.items).toEqual([]);
  });

  it("lets a viewer change nothing", async () => {
    const owner = await Caller.create("owner");
    const viewer = await Caller.create("viewer", owner.organisation);
    const { identity_id: id } = await owner.createPassport({ display_name: "Kept" });
    const { results } = await batch(viewer, [
      { update: { identity_id: id, display_name: "Changed by a viewer" } },
      { create: { family: "api", organisation_id: owner.organisation, display_name: "Refused" } },
    ]);
    expect(results.map((r) => r.status)).toEqual([403, 403]);
    expect((await resolve(id)).record.display_name).toBe("Kept");
  });
});

describe("a binding repeated within one create", () => {
  const repeated = (caller: Caller, value: string) => ({
    family: "api",
    organisation_id: caller.organisation,
    bindings: [
      { class: "endpoint", value },
      { class: "documentation", value: "https://docs.example.com/api" },
      { class: "endpoint", value, label: "the same endpoint again" },
    ],
  });

  it("is a 400 naming the repeated binding, and nothing is stored", async () => {
    const owner = await Caller.create("owner");
    const value = uniqueEndpoint();
    const response = await owner.request("POST", "/v1/passports", repeated(owner, value));
    expect(response.status).toBe(400);
    const problem = await response.json<Body>();
    expect(problem).toMatchObject({
      type: "urn:svc:passport:problem:invalid-request",
      errors: [{ path: "bindings.2", message: `repeats bindings.0 (endpoint ${value})` }],
    });
    expect((await owner.json("GET", "/v1/passports")).items).toEqual([]);
  });

  it("fails only its own item of a batch", async () => {
    const owner = await Caller.create("owner");
    const value = uniqueEndpoint();
    const { results } = await batch(owner, [
      { create: repeated(owner, value) },
      { create: { family: "api", organisation_id: owner.organisation, bindings: [{ class: "endpoint", value }] } },
    ]);
    expect(results.map((r) => r.status)).toEqual([400, 201]);
    expect(results[0]?.problem?.detail).toContain(`endpoint ${value}`);
    expect(results[1]?.passport?.bindings).toEqual([expect.objectContaining({ class: "endpoint", value })]);
  });
});

describe("API passports outside the marketplace (docs/api-passports.md)", () => {
  it("an editor's batch item creating an API passport fails alone with 403; its agent passport is created", async () => {
    const owner = await Caller.create("owner");
    const editor = await Caller.create("editor", owner.organisation);
    const { results } = await batch(editor, [
      { create: { family: "api", organisation_id: owner.organisation, display_name: "Payments API" } },
      { create: { family: "agent", organisation_id: owner.organisation, display_name: "Support agent" } },
    ]);
    expect(results.map((r) => r.status)).toEqual([403, 201]);
    expect(results[0]?.problem?.detail).toMatch(/acquired through the marketplace/);
    const admin = await Caller.create("admin", owner.organisation);
    const created = await batch(admin, [
      { create: { family: "api", organisation_id: owner.organisation, display_name: "Payments API" } },
    ]);
    expect(created.results.map((r) => r.status)).toEqual([201]);
  });
});
