import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { shardsOf } from "../../workers/control/src/db/shards.ts";
import { type Body, Caller, resolve, uniqueEndpoint } from "../support/api.ts";
import { verifiedManifest } from "../support/control-fixtures.ts";
import { everyShard } from "../support/shards.ts";
import { freshOrganisation } from "../support/tokens.ts";

// The API routed over the shards (docs/sharding.md): what is created lands in its organisation's
// shard, the reads that span organisations ask every shard, links and duplicate detection hold
// across shards, and what cannot cross is refused. Every test uses organisations in both shards.

const shards = shardsOf(env);

/** A fresh organisation id placed in `shard` before any token names it. */
async function organisationIn(shard: number): Promise<string> {
  const id = freshOrganisation();
  await shards.placeOrganisation(id, { shard });
  return id;
}

/** An owner of an organisation in `shard`; with `subject`, a further membership of that person. */
async function ownerIn(shard: number, subject?: string): Promise<Caller> {
  return Caller.create("owner", await organisationIn(shard), subject);
}

/** The shards (by number) whose `table` has a row with `id` in `column`. */
async function shardsHolding(table: string, column: string, id: string): Promise<number[]> {
  const found: number[] = [];
  for (const [index, d1] of everyShard().entries()) {
    if (await d1.prepare(`SELECT 1 FROM ${table} WHERE ${column} = ?1`).bind(id).first()) found.push(index);
  }
  return found;
}

/** Every page of a list or search, following `next_cursor`. */
async function everyPage(caller: Caller, query: string): Promise<Body[]> {
  const items: Body[] = [];
  let cursor: string | null = null;
  do {
    const page: Body = await caller.json(
      "GET",
      `/v1/passports?${query}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

describe("the API over two shards", () => {
  it("creates an organisation in its shard (a sub-organisation with its parent) and a passport in its organisation's, the id in the directory first", async () => {
    const owner = await ownerIn(1);
    const created = await owner.json("POST", "/v1/organisations", { name: "Second of the family" }, 201);
    const child = await owner.json("POST", "/v1/organisations", { name: "Child", parent_id: created.id }, 201);
    for (const id of [created.id, child.id]) {
      expect((await shards.placementOf(id)).shard).toBe(1);
      expect(await shardsHolding("organisations", "id", id)).toEqual([1]);
      expect(await shardsHolding("members", "organisation_id", id)).toEqual([1]);
    }
    // A newcomer's first organisation is placed by hash, wherever that falls.
    const newcomer = await Caller.create("owner");
    const first = await newcomer.json("POST", "/v1/organisations", { name: "First" }, 201);
    const placed = (await shards.placementOf(first.id)).shard;
    expect(placed).toBe((await shards.placementOf(newcomer.organisation)).shard);
    expect(await shardsHolding("organisations", "id", first.id)).toEqual([placed]);

    const passport = await owner.createPassport({ organisation_id: child.id, display_name: "In the child" });
    expect(await shards.organisationOfIdentity(passport.identity_id)).toBe(child.id);
    expect(await shardsHolding("passports", "id", passport.identity_id)).toEqual([1]);
    expect((await owner.json("GET", `/v1/passports/${passport.identity_id}`)).display_name).toBe("In the child");
    expect((await resolve(passport.identity_id)).status).toBe(200);
  });

  it("runs a batch whose items are in both shards, each in its own", async () => {
    const inZero = await ownerIn(0);
    const inOne = await ownerIn(1, inZero.subject);
    const existing = await inOne.createPassport({ organisation_id: inOne.organisation, display_name: "Before" });
    const { results } = await inZero.json("POST", "/v1/passports/batch", {
      items: [
        { create: { family: "api", organisation_id: inZero.organisation, display_name: "Batch zero" } },
        { create: { family: "api", organisation_id: inOne.organisation, display_name: "Batch one" } },
        { update: { identity_id: existing.identity_id, display_name: "After" } },
      ],
    });
    expect(results.map((r: Body) => r.status)).toEqual([201, 201, 200]);
    const [zero, one] = results.map((r: Body) => r.passport.identity_id as string);
    expect(await shardsHolding("passports", "id", zero)).toEqual([0]);
    expect(await shardsHolding("passports", "id", one)).toEqual([1]);
    expect(await shards.organisationOfIdentity(one)).toBe(inOne.organisation);
    expect((await inZero.json("GET", `/v1/passports/${existing.identity_id}`)).display_name).toBe("After");
  });

  it("lists organisations, memberships and passports from both shards, and pages a list and a search across them", async () => {
    const inZero = await ownerIn(0);
    const inOne = await ownerIn(1, inZero.subject);
    const word = `fan${crypto.randomUUID().slice(0, 8).replace(/-/g, "")}`;
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      for (const caller of [inZero, inOne]) {
        const passport = await caller.createPassport({
          organisation_id: caller.organisation,
          display_name: `${word} ${i}`,
        });
        created.push(passport.identity_id);
      }
    }
    const mine = (await inZero.json("GET", "/v1/organisations")).items.map((o: Body) => o.id);
    expect(mine).toEqual([inZero.organisation, inOne.organisation].sort());
    const me = await inOne.json("GET", "/v1/me");
    expect(me.memberships.map((m: Body) => m.organisation_id)).toEqual(
      [inZero.organisation, inOne.organisation].sort(),
    );

    const listed = await everyPage(inZero, "family=api");
    expect(listed.map((p) => p.identity_id).sort()).toEqual([...created].sort());
    const order = listed.map((p) => [p.created_at, p.identity_id].join(" "));
    expect(order).toEqual([...order].sort());

    const found = await everyPage(inOne, `q=${word}`);
    expect(found).toHaveLength(created.length);
    expect(found.map((p) => p.identity_id).sort()).toEqual([...created].sort());
    // One organisation named: its shard only, still checked for membership.
    const named = await everyPage(inOne, `organisation_id=${inOne.organisation}`);
    expect(named.map((p) => p.identity_id).sort()).toEqual(created.filter((_, i) => i % 2 === 1).sort());
  });

  it("links an agent to another organisation's API passport in the other shard, counted and listed there", async () => {
    const agentOwner = await ownerIn(0);
    const apiOwner = await ownerIn(1);
    const api = await apiOwner.createPassport({ display_name: "Payments API" });
    const agent = await agentOwner.createPassport({ family: "agent", display_name: "Shopping agent" });
    const linked = await agentOwner.json("POST", `/v1/passports/${agent.identity_id}/uses`, {
      identity_id: api.identity_id,
    });
    expect(linked.uses).toEqual([
      expect.objectContaining({
        identity_id: api.identity_id,
        family: "api",
        display_name: "Payments API",
        lifecycle: "active",
      }),
    ]);
    expect((await resolve(agent.identity_id)).record.uses).toEqual([
      expect.objectContaining({ identity_id: api.identity_id, family: "api" }),
    ]);
    const declarers = await apiOwner.json("GET", `/v1/passports/${api.identity_id}/declared-by`);
    expect(declarers.declared_by).toBe(1);
    expect(declarers.items.map((d: Body) => [d.identity_id, d.organisation.id])).toEqual([
      [agent.identity_id, agentOwner.organisation],
    ]);
    const count = await exports.default.fetch(`http://control.test/public/passports/${api.identity_id}/declared-by`);
    expect(((await count.json()) as Body).declared_by).toBe(1);
    // An unknown target is still refused: it is looked for in its own shard, not only the agent's.
    const unknown = await agentOwner.request("POST", `/v1/passports/${agent.identity_id}/uses`, {
      identity_id: "psp_00000000000000000000000000",
    });
    expect(unknown.status).toBe(404);
  });

  it("refuses an operator or a transfer target in another shard; a transfer within one moves the id in the directory", async () => {
    const home = await ownerIn(0);
    const elsewhere = await ownerIn(1, home.subject);
    const beside = await ownerIn(0, home.subject);
    const passport = await home.createPassport({ organisation_id: home.organisation });
    const id = passport.identity_id as string;
    for (const [path, body] of [
      [`/v1/passports/${id}`, { operator_organisation_id: elsewhere.organisation }],
      [`/v1/passports/${id}/transfer`, { organisation_id: elsewhere.organisation, reason: "Reorganised" }],
    ] as const) {
      const refused = await home.request(path.endsWith("transfer") ? "POST" : "PATCH", path, body);
      expect(refused.status).toBe(409);
      const problem = (await refused.json()) as Body;
      expect(problem.type).toBe("urn:svc:passport:problem:crosses-shards");
      expect(problem.detail).toContain(elsewhere.organisation);
    }
    expect((await home.json("GET", `/v1/passports/${id}`)).record_version).toBe(passport.record_version);

    await home.json("POST", `/v1/passports/${id}/transfer`, { organisation_id: beside.organisation, reason: "Merged" });
    expect(await shards.organisationOfIdentity(id)).toBe(beside.organisation);
    expect((await beside.json("GET", `/v1/passports/${id}`)).organisation.id).toBe(beside.organisation);
  });

  it("refuses a claim of a binding another organisation proved in the other shard, by create and by add, until it is removed", async () => {
    const prover = await ownerIn(0);
    const claimant = await ownerIn(1);
    const { manifest, id, bindingId } = await verifiedManifest(prover);
    const binding = { class: "manifest", value: manifest };

    const created = await claimant.request("POST", "/v1/passports", {
      family: "agent",
      organisation_id: claimant.organisation,
      bindings: [binding],
    });
    expect(created.status).toBe(409);
    expect(await created.json()).toMatchObject({
      type: "urn:svc:passport:problem:duplicate-identity",
      verified_holder: { identity_id: id, organisation_id: prover.organisation },
    });
    const agent = await claimant.createPassport({ family: "agent", display_name: "Would-be holder" });
    const added = await claimant.request("POST", `/v1/passports/${agent.identity_id}/bindings`, binding);
    expect(added.status).toBe(409);
    expect(((await added.json()) as Body).verified_holder).toEqual({
      identity_id: id,
      organisation_id: prover.organisation,
    });

    // The proof leaves the index with its binding; the value can then be claimed.
    await prover.json("DELETE", `/v1/passports/${id}/bindings/${bindingId}`);
    const claimed = await claimant.json("POST", `/v1/passports/${agent.identity_id}/bindings`, binding);
    expect(claimed.bindings.map((b: Body) => b.value)).toEqual([manifest]);
    // An endpoint nobody proved is claimed across shards as before.
    await claimant.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
  });
});
