import { exports } from "cloudflare:workers";
import { MAX_USES_LINKS } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { database } from "../../workers/control/src/db/client.ts";
import { insertUse, isUsesLimitViolation } from "../../workers/control/src/db/uses.ts";
import { type Body, Caller, resolve } from "../support/api.ts";
import { dashboard } from "../support/control-fixtures.ts";
import { shardOfIdentity } from "../support/shards.ts";

// Agent uses links (docs/reciprocal-trust.md): an agent declares the API passports it calls; the
// agent's record publishes them; the API's organisation sees who declares it, the public only a
// count; links to revoked or retired passports are flagged; a link never touches the target.

async function apiPassport(organisation?: string): Promise<{ owner: Caller; id: string }> {
  const owner = await Caller.create("owner", organisation);
  const created = await owner.createPassport({ family: "api", display_name: "Payments API" });
  return { owner, id: created.identity_id };
}

async function agentPassport(caller: Caller, name = "Billing agent"): Promise<string> {
  return (await caller.createPassport({ family: "agent", display_name: name })).identity_id;
}

async function publicCount(id: string): Promise<{ status: number; body: Body; cache: string | null }> {
  const response = await exports.default.fetch(`http://control.test/public/passports/${id}/declared-by`);
  return { status: response.status, body: await response.json(), cache: response.headers.get("cache-control") };
}

describe("agent uses links", () => {
  it("are declared and withdrawn by the agent, published in its record, and never change the target", async () => {
    const api = await apiPassport();
    const before = await resolve(api.id);
    const editor = await Caller.create("editor");
    const agent = await agentPassport(editor);

    const declared = await editor.json("POST", `/v1/passports/${agent}/uses`, { identity_id: api.id });
    expect(declared.uses).toEqual([
      {
        identity_id: api.id,
        family: "api",
        declared_at: expect.any(String),
        display_name: "Payments API",
        lifecycle: "active",
        flagged: false,
      },
    ]);
    const { record } = await resolve(agent);
    expect(record.uses).toEqual([{ identity_id: api.id, family: "api", declared_at: declared.uses[0].declared_at }]);

    // The API's record, its version and its history are exactly as they were.
    const after = await resolve(api.id);
    expect(after.record).toEqual(before.record);
    const history = await api.owner.json("GET", `/v1/passports/${api.id}/history`);
    expect(history.items.map((e: Body) => e.kind)).toEqual(["passport.created"]);

    const again = await editor.request("POST", `/v1/passports/${agent}/uses`, { identity_id: api.id });
    expect(again.status).toBe(409);
    expect((await again.json<Body>()).type).toBe("urn:svc:passport:problem:link-exists");

    const withdrawn = await editor.json("DELETE", `/v1/passports/${agent}/uses/${api.id}`);
    expect(withdrawn.uses).toEqual([]);
    expect((await resolve(agent)).record.uses).toBeUndefined();
    const agentHistory = await editor.json("GET", `/v1/passports/${agent}/history`);
    expect(agentHistory.items.map((e: Body) => e.kind).slice(-2)).toEqual(["uses.declared", "uses.removed"]);
    expect((await editor.request("DELETE", `/v1/passports/${agent}/uses/${api.id}`)).status).toBe(404);
  });

  it("are refused from API passports, to the passport itself, to unknown ids, and past 50 per agent", async () => {
    const api = await apiPassport();
    const other = await api.owner.createPassport({ family: "api", display_name: "Other API" });
    const fromApi = await api.owner.request("POST", `/v1/passports/${api.id}/uses`, { identity_id: other.identity_id });
    expect(fromApi.status).toBe(400);
    expect(await fromApi.text()).toContain("Only agent passports declare");

    const agent = await agentPassport(api.owner);
    expect((await api.owner.request("POST", `/v1/passports/${agent}/uses`, { identity_id: agent })).status).toBe(400);
    const unknown = await api.owner.request("POST", `/v1/passports/${agent}/uses`, {
      identity_id: "psp_00000000000000000000000000",
    });
    expect(unknown.status).toBe(404);

    const targets = await Promise.all(
      Array.from({ length: 51 }, (_, i) => api.owner.createPassport({ family: "agent", display_name: `MCP ${i}` })),
    );
    for (const target of targets.slice(0, 50)) {
      await api.owner.json("POST", `/v1/passports/${agent}/uses`, { identity_id: target.identity_id });
    }
    const over = await api.owner.request("POST", `/v1/passports/${agent}/uses`, {
      identity_id: targets[50]?.identity_id,
    });
    expect(over.status).toBe(400);
    expect(await over.text()).toContain("at most 50");
    expect((await resolve(agent)).record.uses).toHaveLength(50);
  });

  it("the database holds the limit when writes race past the check (migration 0020)", async () => {
    const owner = await Caller.create("owner");
    const agent = await agentPassport(owner);
    const targets = await Promise.all(
      Array.from({ length: 51 }, (_, i) => owner.createPassport({ family: "agent", display_name: `Raced ${i}` })),
    );
    const db = database(await shardOfIdentity(agent));
    const rows = targets.map((t) =>
      insertUse(db, {
        agentId: agent,
        targetId: t.identity_id,
        targetFamily: "agent",
        declaredAt: new Date().toISOString(),
      }),
    );
    const [first, ...rest] = rows;
    if (!first) throw new Error("no rows");
    const failure = await db.batch([first, ...rest]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isUsesLimitViolation(failure)).toBe(true);
    // The batch is one transaction: none of its links were written.
    expect((await owner.json("GET", `/v1/passports/${agent}`)).uses).toEqual([]);
  });

  it("the database's limit is MAX_USES_LINKS: that many links commit, one more is refused (migration 0020)", async () => {
    const owner = await Caller.create("owner");
    const agent = await agentPassport(owner);
    const targets = await Promise.all(
      Array.from({ length: MAX_USES_LINKS + 1 }, (_, i) =>
        owner.createPassport({ family: "api", display_name: `Limit ${i}` }),
      ),
    );
    const db = database(await shardOfIdentity(agent));
    const link = (targetId: string) =>
      insertUse(db, { agentId: agent, targetId, targetFamily: "api", declaredAt: new Date().toISOString() });
    const [first, ...rest] = targets.slice(0, MAX_USES_LINKS).map((t) => link(t.identity_id));
    if (!first) throw new Error("no rows");
    await db.batch([first, ...rest]);
    const failure = await link(targets[MAX_USES_LINKS]?.identity_id).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isUsesLimitViolation(failure)).toBe(true);
  });

  it("the API's organisation sees the declaring agents; the public sees a count; another tenant sees neither list nor changes", async () => {
    const api = await apiPassport();
    const hostile = await Caller.create("owner");
    const first = await agentPassport(hostile, "Scraper");
    const second = await agentPassport(hostile, "Crawler");
    await hostile.json("POST", `/v1/passports/${first}/uses`, { identity_id: api.id });
    await hostile.json("POST", `/v1/passports/${second}/uses`, { identity_id: api.id });

    const viewer = await Caller.create("viewer", api.owner.organisation);
    const page = await viewer.json("GET", `/v1/passports/${api.id}/declared-by?limit=1`);
    expect(page).toMatchObject({ identity_id: api.id, declared_by: 2, flagged: 0, target_flagged: false });
    expect(page.items).toEqual([
      {
        identity_id: first,
        display_name: "Scraper",
        organisation: { id: hostile.organisation, name: expect.any(String) },
        lifecycle: "active",
        declared_at: expect.any(String),
        flagged: false,
      },
    ]);
    const next = await viewer.json(
      "GET",
      `/v1/passports/${api.id}/declared-by?limit=1&cursor=${encodeURIComponent(page.next_cursor)}`,
    );
    expect(next.items.map((i: Body) => i.identity_id)).toEqual([second]);
    expect(next.next_cursor).toBeNull();

    // Another organisation (the declaring one too) is told the passport does not exist.
    const foreign = await hostile.request("GET", `/v1/passports/${api.id}/declared-by`);
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).not.toContain(first);

    const count = await publicCount(api.id);
    expect(count.status).toBe(200);
    expect(count.body).toEqual({ identity_id: api.id, declared_by: 2, flagged: 0, target_flagged: false });
    expect(count.cache).toBe("public, max-age=60");
    expect((await publicCount("psp_00000000000000000000000000")).status).toBe(404);

    // Declaring links republished nothing of the API.
    expect((await resolve(api.id)).record.record_version).toBe(1);
  });

  it("flags links to a revoked passport, and declarers that are revoked, in every view", async () => {
    const api = await apiPassport();
    const agentOwner = await Caller.create("owner");
    const agent = await agentPassport(agentOwner);
    const revokedAgent = await agentPassport(agentOwner, "Retired helper");
    await agentOwner.json("POST", `/v1/passports/${agent}/uses`, { identity_id: api.id });
    await agentOwner.json("POST", `/v1/passports/${revokedAgent}/uses`, { identity_id: api.id });
    await agentOwner.json("PATCH", `/v1/passports/${revokedAgent}/state`, { lifecycle: "revoked" });

    let list = await api.owner.json("GET", `/v1/passports/${api.id}/declared-by`);
    expect(list).toMatchObject({ declared_by: 2, flagged: 1, target_flagged: false });
    expect(list.items.find((i: Body) => i.identity_id === revokedAgent)).toMatchObject({
      lifecycle: "revoked",
      flagged: true,
    });
    expect((await publicCount(api.id)).body).toMatchObject({ declared_by: 2, flagged: 1, target_flagged: false });

    await api.owner.json("PATCH", `/v1/passports/${api.id}/state`, { lifecycle: "revoked" });
    const agentView = await agentOwner.json("GET", `/v1/passports/${agent}`);
    expect(agentView.uses[0]).toMatchObject({ identity_id: api.id, lifecycle: "revoked", flagged: true });
    list = await api.owner.json("GET", `/v1/passports/${api.id}/declared-by`);
    expect(list.target_flagged).toBe(true);
    expect((await publicCount(api.id)).body.target_flagged).toBe(true);
  });

  it("the Dashboard shows an agent's uses with a form, and the API's page lists who declares it", async () => {
    const api = await apiPassport();
    const agentOwner = await Caller.create("owner");
    const agent = await agentPassport(agentOwner, "Declaring agent");
    await agentOwner.json("POST", `/v1/passports/${agent}/uses`, { identity_id: api.id });
    const page = async (caller: Caller, id: string) => (await dashboard(caller, `/dashboard/passports/${id}`)).text();

    const agentPage = await page(agentOwner, agent);
    expect(agentPage).toContain("Passports this agent uses");
    expect(agentPage).toContain(`<code>${api.id}</code>`);
    expect(agentPage).toContain(`action="/dashboard/passports/${agent}/uses"`);
    expect(agentPage).toContain(`action="/dashboard/passports/${agent}/uses/${api.id}/remove"`);

    const apiPage = await page(api.owner, api.id);
    expect(apiPage).toContain("Agents that declare they use this passport");
    expect(apiPage).toContain('<span id="declarer-count">1</span>');
    expect(apiPage).toContain("Declaring agent");
    expect(apiPage).toContain(`<code>${agent}</code>`);
  });
});
