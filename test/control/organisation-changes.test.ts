import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PUBLISHED_IN_REQUEST } from "../../workers/control/src/changes/organisation-changes.ts";
import { drainOutbox } from "../../workers/control/src/publication/publish.ts";
import { type Body, Caller, organisationState, resolve } from "../support/api.ts";
import { besideOrganisation, inEveryShard, shardOfOrganisation } from "../support/shards.ts";

interface OrganisationView {
  name: string;
  parent: { id: string; name: string } | null;
  children: { id: string; name: string }[];
  history: { kind: string; actor: string; detail: Record<string, unknown> }[];
}

describe("organisations that say who they are", () => {
  it("renames an organisation, keeps the rename in its history and publishes it in every record naming it", async () => {
    const owner = await Caller.create("owner");
    const passport = await owner.createPassport();
    const child = await owner.json(
      "POST",
      "/v1/organisations",
      { name: "Payments team", parent_id: owner.organisation },
      201,
    );
    const childPassport = await owner.createPassport({ organisation_id: child.id });

    const renamed = await owner.json<OrganisationView>("PATCH", `/v1/organisations/${owner.organisation}`, {
      name: "Example Payments Ltd",
      reason: "Marketplace set-up named it neutrally",
    });
    expect(renamed.name).toBe("Example Payments Ltd");
    expect(renamed.children).toEqual([{ id: child.id, name: "Payments team" }]);
    expect(renamed.history[0]).toMatchObject({
      kind: "organisation.renamed",
      actor: owner.subject,
      detail: { to: "Example Payments Ltd", reason: "Marketplace set-up named it neutrally" },
    });

    const own = (await resolve(passport.identity_id)).record;
    expect(own.organisation.name).toBe("Example Payments Ltd");
    expect(own.record_version).toBe(passport.record_version + 1);
    const childRecord = (await resolve(childPassport.identity_id)).record;
    expect(childRecord.organisation.parent).toEqual({ id: owner.organisation, name: "Example Payments Ltd" });

    // The passport's own history says why its record changed.
    const history = await owner.json<{ items: Body[] }>("GET", `/v1/passports/${passport.identity_id}/history`);
    expect(history.items.map((e) => e.kind)).toContain("organisation.renamed");
  });

  it("sets and clears a parent the caller administers, publishes it, and refuses cycles", async () => {
    const owner = await Caller.create("owner");
    const passport = await owner.createPassport();
    const holding = await owner.json("POST", "/v1/organisations", { name: "Example Holdings" }, 201);

    const moved = await owner.json<OrganisationView>("PATCH", `/v1/organisations/${owner.organisation}`, {
      parent_id: holding.id,
    });
    expect(moved.parent).toEqual({ id: holding.id, name: "Example Holdings" });
    expect(moved.history[0]).toMatchObject({
      kind: "organisation.parent_changed",
      detail: { from: null, to: holding.id },
    });
    expect((await resolve(passport.identity_id)).record.organisation.parent).toEqual({
      id: holding.id,
      name: "Example Holdings",
    });

    // The holding cannot go under its own child, nor an organisation under itself.
    const held = await owner.createPassport({ organisation_id: holding.id });
    const cycle = await owner.request("PATCH", `/v1/organisations/${holding.id}`, { parent_id: owner.organisation });
    expect(cycle.status).toBe(400);
    // A refused move gives no record a new version.
    const heldNow = await owner.json("GET", `/v1/passports/${held.identity_id}`);
    expect(heldNow.record_version).toBe(held.record_version);
    const self = await owner.request("PATCH", `/v1/organisations/${holding.id}`, { parent_id: holding.id });
    expect(self.status).toBe(400);
    // A refused move leaves no trace in the history; the applied one left exactly one entry.
    const history = await (await shardOfOrganisation(holding.id))
      .prepare("SELECT organisation_id, kind FROM organisation_events WHERE organisation_id IN (?, ?)")
      .bind(holding.id, owner.organisation)
      .all<{ organisation_id: string; kind: string }>();
    expect(history.results.filter((e) => e.kind === "organisation.parent_changed")).toEqual([
      { organisation_id: owner.organisation, kind: "organisation.parent_changed" },
    ]);

    const cleared = await owner.json<OrganisationView>("PATCH", `/v1/organisations/${owner.organisation}`, {
      parent_id: null,
    });
    expect(cleared.parent).toBeNull();
    expect((await resolve(passport.identity_id)).record.organisation.parent).toBeUndefined();
  });

  it("tells a child organisation's members of a rename without the renaming member or the reason", async () => {
    // B is an admin of O only; V a viewer of C only; C is O's child, attached by a founder admin of both.
    const admin = await Caller.create("admin");
    const parent = admin.organisation;
    const founder = await Caller.create("owner", await besideOrganisation(parent));
    const child = founder.organisation;
    await admin.json("PUT", `/v1/organisations/${parent}/members/${founder.subject}`, { role: "admin" }, 201);
    await founder.json("PATCH", `/v1/organisations/${child}`, { parent_id: parent });
    const childPassport = await founder.createPassport({ display_name: "Child's API" });
    const operated = await founder.createPassport({ display_name: "Operated by the parent" });
    await founder.json("PATCH", `/v1/passports/${operated.identity_id}`, { operator_organisation_id: parent });
    const viewer = await Caller.create("viewer", child);
    const ownPassport = await admin.createPassport({ display_name: "Parent's API" });
    const versionOf = async (id: string) => (await founder.json("GET", `/v1/passports/${id}`)).record_version;
    const childVersion = await versionOf(childPassport.identity_id);
    const operatedVersion = await versionOf(operated.identity_id);
    const oldName = (await admin.json<OrganisationView>("GET", `/v1/organisations/${parent}`)).name;

    const reason = "Board minute 7: the merger with Example Rival stays confidential";
    await admin.json("PATCH", `/v1/organisations/${parent}`, { name: "Example Group", reason });

    // The viewer cannot see the parent organisation at all.
    expect((await viewer.request("GET", `/v1/organisations/${parent}`)).status).toBe(404);
    for (const [passport, before] of [
      [childPassport, childVersion],
      [operated, operatedVersion],
    ] as const) {
      const response = await viewer.request("GET", `/v1/passports/${passport.identity_id}/history`);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).not.toContain(admin.subject);
      expect(text).not.toContain(reason);
      const items = (JSON.parse(text) as { items: Body[] }).items;
      const renamed = items.filter((e) => e.kind === "organisation.renamed");
      expect(renamed).toHaveLength(1);
      expect(renamed[0]).toMatchObject({
        actor: `organisation:${parent}`,
        record_version: before + 1,
        detail: { organisation_id: parent, from: oldName, to: "Example Group" },
      });
      expect(Object.keys(renamed[0]?.detail ?? {}).sort()).toEqual(["from", "organisation_id", "to"]);
      expect(await versionOf(passport.identity_id)).toBe(before + 1);
    }
    expect((await resolve(childPassport.identity_id)).record.organisation.parent).toEqual({
      id: parent,
      name: "Example Group",
    });
    expect((await resolve(operated.identity_id)).record.operator).toEqual({ id: parent, name: "Example Group" });

    // The parent's own passport and its own history still say who renamed it and why.
    const own = await admin.json<{ items: Body[] }>("GET", `/v1/passports/${ownPassport.identity_id}/history`);
    expect(own.items.find((e) => e.kind === "organisation.renamed")).toMatchObject({
      actor: admin.subject,
      record_version: ownPassport.record_version + 1,
      detail: { organisation_id: parent, from: oldName, to: "Example Group", reason },
    });
    const organisation = await admin.json<OrganisationView>("GET", `/v1/organisations/${parent}`);
    expect(organisation.history[0]).toMatchObject({
      kind: "organisation.renamed",
      actor: admin.subject,
      detail: { from: oldName, to: "Example Group", reason },
    });
  });

  // Each organisation is one write: 68 of them stay well under the per-subject write limit.
  it("refuses a move under a descendant however deep, changing nothing", async () => {
    const owner = await Caller.create("owner");
    const chain = [owner.organisation];
    for (let n = 1; n <= 67; n++) {
      const created = await owner.json(
        "POST",
        "/v1/organisations",
        { name: `Level ${n}`, parent_id: chain[n - 1] },
        201,
      );
      chain.push(created.id);
    }
    const top = chain[0] as string;
    const lowest = chain[chain.length - 1] as string;
    const passport = await owner.createPassport();
    const before = await organisationState(top);
    const topShard = await shardOfOrganisation(top);
    const parents = () =>
      topShard
        .prepare(`SELECT id, parent_id FROM organisations WHERE id IN (${chain.map(() => "?").join(",")}) ORDER BY id`)
        .bind(...chain)
        .all();
    const parentsBefore = (await parents()).results;

    const cycle = await owner.request("PATCH", `/v1/organisations/${top}`, { parent_id: lowest });
    expect(cycle.status).toBe(400);
    expect(((await cycle.json()) as Body).type).toMatch(/invalid-request$/);
    expect((await parents()).results).toEqual(parentsBefore);
    expect(await organisationState(top)).toBe(before);
    expect((await owner.json("GET", `/v1/passports/${passport.identity_id}`)).record_version).toBe(
      passport.record_version,
    );
    const moves = await topShard
      .prepare(
        "SELECT count(*) AS n FROM organisation_events WHERE organisation_id = ? AND kind = 'organisation.parent_changed'",
      )
      .bind(top)
      .first<{ n: number }>();
    expect(moves?.n).toBe(0);
    // A move within the chain that makes no cycle still applies.
    const lower = await owner.json<OrganisationView>("PATCH", `/v1/organisations/${chain[2]}`, { parent_id: top });
    expect(lower.parent?.id).toBe(top);
  }, 30_000);

  // 26 passports are created one by one first: on a loaded machine that alone can pass 5 s.
  it("gives every record a rename's version in one commit, publishes the first few and leaves the rest to the drain", async () => {
    const owner = await Caller.create("owner");
    const created: Body[] = [];
    for (let n = 0; n < PUBLISHED_IN_REQUEST + 5; n++) created.push(await owner.createPassport());
    const retired = await owner.createPassport();
    await owner.json("PATCH", `/v1/passports/${retired.identity_id}/state`, { lifecycle: "retired" });
    const retiredBefore = await resolve(retired.identity_id);

    await owner.json("PATCH", `/v1/organisations/${owner.organisation}`, { name: "Renamed at scale" });

    // Every record that may change owes its next version, with its history event, at once.
    const rows = await (await shardOfOrganisation(owner.organisation))
      .prepare(
        `SELECT p.id, p.record_version AS version, e.kind, o.record_version AS owed
       FROM passports p LEFT JOIN events e ON e.passport_id = p.id AND e.record_version = p.record_version
       LEFT JOIN outbox o ON o.passport_id = p.id WHERE p.organisation_id = ? AND p.lifecycle <> 'retired'`,
      )
      .bind(owner.organisation)
      .all<{ id: string; version: number; kind: string; owed: number | null }>();
    expect(rows.results).toHaveLength(created.length);
    for (const row of rows.results) {
      expect(row).toMatchObject({ version: 2, kind: "organisation.renamed" });
      expect(row.owed === null || row.owed === 2).toBe(true);
    }
    // The request published exactly its share; every other record still owes version 2.
    expect(rows.results.filter((row) => row.owed === null)).toHaveLength(PUBLISHED_IN_REQUEST);
    expect(rows.results.filter((row) => row.owed === 2)).toHaveLength(created.length - PUBLISHED_IN_REQUEST);
    const names = async () =>
      Promise.all(created.map(async (p) => (await resolve(p.identity_id)).record.organisation.name));
    const served = await names();
    expect(served.filter((name) => name === "Renamed at scale")).toHaveLength(PUBLISHED_IN_REQUEST);

    // A publication owed for a passport's own change, due after the bulk rows, is drained first.
    // Beside the renamed organisation: the drain takes each shard's most urgent publication first.
    const urgent = await Caller.create("owner", await besideOrganisation(owner.organisation));
    const own = await urgent.createPassport();
    await (await shardOfOrganisation(urgent.organisation))
      .prepare("INSERT INTO outbox (passport_id, record_version, attempts, next_attempt_at) VALUES (?, ?, 0, ?)")
      .bind(own.identity_id, own.record_version, new Date(Date.now() + 1000).toISOString())
      .run();
    // The outbox as the drain sees it: every shard's rows.
    const owed = async () => ({
      results: (
        await inEveryShard(
          async (db) =>
            (
              await db.$client
                .prepare("SELECT passport_id AS id, bulk FROM outbox ORDER BY passport_id")
                .all<{ id: string; bulk: number }>()
            ).results,
        )
      ).flat(),
    });
    expect((await owed()).results).toContainEqual({ id: own.identity_id, bulk: 0 });
    await drainOutbox(env, new Date(Date.now() + 60_000), 1);
    const left = (await owed()).results;
    expect(left.map((row) => row.id)).not.toContain(own.identity_id);
    expect(left.filter((row) => row.bulk === 1)).toHaveLength(created.length - PUBLISHED_IN_REQUEST);

    await drainOutbox(env, new Date(Date.now() + 60_000));
    expect(new Set(await names())).toEqual(new Set(["Renamed at scale"]));
    // A retired passport is kept exactly as it was.
    expect(await resolve(retired.identity_id)).toEqual(retiredBefore);
  }, 30_000);

  it("refuses renames by editors, outsiders and a parent the caller does not administer, changing nothing", async () => {
    const owner = await Caller.create("owner");
    await owner.createPassport();
    const editor = await Caller.create("editor", owner.organisation);
    const outsider = await Caller.create("owner");
    const before = await organisationState(owner.organisation);

    expect(
      (await editor.request("PATCH", `/v1/organisations/${owner.organisation}`, { name: "Hijacked" })).status,
    ).toBe(403);
    expect(
      (await outsider.request("PATCH", `/v1/organisations/${owner.organisation}`, { name: "Hijacked" })).status,
    ).toBe(404);
    // Attaching under someone else's organisation would borrow their name in our records; one the
    // caller is not a member of is not even visible to them.
    const borrowed = await owner.request("PATCH", `/v1/organisations/${owner.organisation}`, {
      parent_id: outsider.organisation,
    });
    expect(borrowed.status).toBe(404);
    expect((await owner.request("PATCH", `/v1/organisations/${owner.organisation}`, {})).status).toBe(400);
    expect(await organisationState(owner.organisation)).toBe(before);
    const events = await (await shardOfOrganisation(owner.organisation))
      .prepare("SELECT count(*) AS n FROM organisation_events WHERE organisation_id = ?")
      .bind(owner.organisation)
      .first<{ n: number }>();
    expect(events?.n).toBe(0);
  });
});

describe("an operator relationship", () => {
  it("is stated on a passport, kept in its history and published in the record", async () => {
    const owner = await Caller.create("owner");
    const passport = await owner.createPassport({ display_name: "Hosted payments" });
    expect((await resolve(passport.identity_id)).record.organisation.relationship).toBe("responsible");

    const updated = await owner.json("PATCH", `/v1/passports/${passport.identity_id}`, { relationship: "operator" });
    expect(updated.organisation.relationship).toBe("operator");
    expect(updated.display_name).toBe("Hosted payments");
    const { record } = await resolve(passport.identity_id);
    expect(record.organisation.relationship).toBe("operator");
    const history = await owner.json<{ items: Body[] }>("GET", `/v1/passports/${passport.identity_id}/history`);
    expect(history.items.find((e) => e.kind === "relationship.changed")).toBeDefined();

    const viewer = await Caller.create("viewer", owner.organisation);
    const refused = await viewer.request("PATCH", `/v1/passports/${passport.identity_id}`, {
      relationship: "responsible",
    });
    expect(refused.status).toBe(403);
    expect((await resolve(passport.identity_id)).record.organisation.relationship).toBe("operator");
  });
});

describe("a separate operator organisation", () => {
  it("is named beside the responsible organisation, follows the operator's rename, and is cleared", async () => {
    const owner = await Caller.create("owner");
    const passport = await owner.createPassport({ display_name: "Hosted payments" });
    const hosting = await owner.json("POST", "/v1/organisations", { name: "Example Hosting" }, 201);

    const updated = await owner.json("PATCH", `/v1/passports/${passport.identity_id}`, {
      operator_organisation_id: hosting.id,
    });
    expect(updated.operator).toEqual({ id: hosting.id, name: "Example Hosting" });
    expect(updated.organisation).toMatchObject({ id: owner.organisation, relationship: "responsible" });
    let { record } = await resolve(passport.identity_id);
    expect(record.organisation).toMatchObject({ id: owner.organisation, relationship: "responsible" });
    expect(record.operator).toEqual({ id: hosting.id, name: "Example Hosting" });
    const history = await owner.json<{ items: Body[] }>("GET", `/v1/passports/${passport.identity_id}/history`);
    expect(history.items.find((e) => e.kind === "operator.changed")?.detail).toEqual({
      operator_organisation_id: hosting.id,
    });

    // The operator's name is public in the record, so its rename gives the record a new version.
    await owner.json("PATCH", `/v1/organisations/${hosting.id}`, { name: "Example Hosting Ltd" });
    ({ record } = await resolve(passport.identity_id));
    expect(record.operator).toEqual({ id: hosting.id, name: "Example Hosting Ltd" });
    expect(record.record_version).toBe(3);

    const cleared = await owner.json("PATCH", `/v1/passports/${passport.identity_id}`, {
      operator_organisation_id: null,
    });
    expect(cleared.operator).toBeNull();
    ({ record } = await resolve(passport.identity_id));
    expect(record.operator).toBeUndefined();
  });

  it("refuses its own organisation, an organisation the caller cannot edit in, and an operator beside 'operator'", async () => {
    const owner = await Caller.create("owner");
    const passport = await owner.createPassport();
    const path = `/v1/passports/${passport.identity_id}`;
    const hosting = await owner.json("POST", "/v1/organisations", { name: "Example Hosting" }, 201);
    const stranger = await Caller.create("owner");
    const colleague = await Caller.create("editor", owner.organisation);
    await owner.json("PUT", `/v1/organisations/${hosting.id}/members/${colleague.subject}`, { role: "viewer" }, 201);
    const before = await organisationState(owner.organisation);

    const refusals: [Caller, Body, number, string][] = [
      [owner, { operator_organisation_id: owner.organisation }, 400, "the passport's own organisation"],
      [owner, { operator_organisation_id: stranger.organisation }, 400, "no organisation you belong to"],
      [colleague, { operator_organisation_id: hosting.id }, 403, "editor role"],
      [
        owner,
        { relationship: "operator", operator_organisation_id: hosting.id },
        400,
        "needs relationship responsible",
      ],
    ];
    for (const [caller, body, status, words] of refusals) {
      const response = await caller.request("PATCH", path, body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(JSON.stringify(await response.json())).toContain(words);
    }
    expect(await organisationState(owner.organisation)).toBe(before);
    expect((await resolve(passport.identity_id)).record.operator).toBeUndefined();

    // An organisation that only operates the object cannot name a separate operator later either.
    await owner.json("PATCH", path, { operator_organisation_id: hosting.id });
    const contradiction = await owner.request("PATCH", path, { relationship: "operator" });
    expect(contradiction.status).toBe(400);
  });
});
