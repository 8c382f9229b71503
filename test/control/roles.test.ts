import { describe, expect, it } from "vitest";
import { Caller, organisationState, type Role, uniqueEndpoint } from "../support/api.ts";

type Operation = { name: string; minimum: Role; run: (caller: Caller, id: string) => Promise<Response> };

const operations: Operation[] = [
  { name: "read a passport", minimum: "viewer", run: (c, id) => c.request("GET", `/v1/passports/${id}`) },
  { name: "read history", minimum: "viewer", run: (c, id) => c.request("GET", `/v1/passports/${id}/history`) },
  {
    name: "create an agent passport",
    minimum: "editor",
    run: (c) =>
      c.request("POST", "/v1/passports", {
        family: "agent",
        organisation_id: c.organisation,
        display_name: "Role test",
      }),
  },
  {
    // API passports are acquired through the marketplace; outside it only an owner or admin creates one (docs/api-passports.md).
    name: "create an API passport outside the marketplace",
    minimum: "admin",
    run: (c) =>
      c.request("POST", "/v1/passports", { family: "api", organisation_id: c.organisation, display_name: "Role test" }),
  },
  {
    name: "add a binding",
    minimum: "editor",
    run: (c, id) => c.request("POST", `/v1/passports/${id}/bindings`, { class: "endpoint", value: uniqueEndpoint() }),
  },
  {
    name: "add evidence",
    minimum: "editor",
    run: (c, id) =>
      c.request("POST", `/v1/passports/${id}/evidence`, {
        claim: "c",
        source: "s",
        scope: "x",
        observed_at: "2026-11-01T00:00:00Z",
      }),
  },
  {
    name: "change availability",
    minimum: "editor",
    run: (c, id) => c.request("PATCH", `/v1/passports/${id}/state`, { availability: "degraded" }),
  },
  {
    name: "suspend",
    minimum: "admin",
    run: (c, id) => c.request("PATCH", `/v1/passports/${id}/state`, { lifecycle: "suspended" }),
  },
  {
    name: "add a member",
    minimum: "admin",
    run: (c) =>
      c.request("PUT", `/v1/organisations/${c.organisation}/members/new-${crypto.randomUUID()}`, { role: "viewer" }),
  },
  {
    name: "grant the owner role",
    minimum: "owner",
    run: (c) =>
      c.request("PUT", `/v1/organisations/${c.organisation}/members/new-${crypto.randomUUID()}`, { role: "owner" }),
  },
];

const ROLES: Role[] = ["viewer", "editor", "admin", "owner"];
const rank = (role: Role) => ROLES.indexOf(role);

describe("roles", () => {
  for (const operation of operations) {
    for (const role of ROLES) {
      const allowed = rank(role) >= rank(operation.minimum);
      it(`${role} ${allowed ? "may" : "may not"} ${operation.name}`, async () => {
        const owner = await Caller.create("owner");
        const { identity_id: id } = await owner.createPassport();
        const caller = await Caller.create(role, owner.organisation);
        const before = await organisationState(owner.organisation);
        const response = await operation.run(caller, id);
        if (allowed) {
          expect(response.status, await response.clone().text()).toBeLessThan(300);
        } else {
          expect(response.status).toBe(403);
          expect(await organisationState(owner.organisation)).toBe(before);
        }
      });
    }
  }

  it("only owners of both organisations may move responsibility, and the move is in history", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const target = await owner.json("POST", "/v1/organisations", { name: "Acquirer" }, 201);
    const moved = await owner.json("POST", `/v1/passports/${id}/transfer`, {
      organisation_id: target.id,
      reason: "Business unit sold",
    });
    expect(moved.identity_id).toBe(id);
    expect(moved.organisation.id).toBe(target.id);
    const admin = await Caller.create("admin", target.id);
    const refused = await admin.request("POST", `/v1/passports/${id}/transfer`, {
      organisation_id: owner.organisation,
      reason: "back",
    });
    expect(refused.status).toBe(404); // the admin is not a member of the original organisation
    const history = await owner.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.at(-1)).toMatchObject({
      kind: "responsibility.changed",
      detail: { from: owner.organisation, to: target.id, reason: "Business unit sold" },
    });
  });

  it("recovers an account by adding the member's new subject without touching passports", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const before = await owner.json("GET", `/v1/passports/${id}`);
    const newSubject = `recovered-${crypto.randomUUID()}`;
    await owner.json("PUT", `/v1/organisations/${owner.organisation}/members/${newSubject}`, { role: "editor" }, 201);
    const after = await owner.json("GET", `/v1/passports/${id}`);
    expect(after).toEqual(before);
    const organisation = await owner.json("GET", `/v1/organisations/${owner.organisation}`);
    expect(organisation.members.map((m: { subject: string }) => m.subject)).toContain(newSubject);
  });

  it("keeps at least one owner", async () => {
    const owner = await Caller.create("owner");
    const response = await owner.request("DELETE", `/v1/organisations/${owner.organisation}/members/${owner.subject}`);
    expect(response.status).toBe(400);
  });
});

describe("tenant isolation", () => {
  it("hides organisation A's passports from organisation B on every route", async () => {
    const a = await Caller.create("owner");
    const b = await Caller.create("owner");
    const created = await a.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
    const id = created.identity_id;
    const before = await organisationState(a.organisation);
    const attempts: [string, string, unknown?][] = [
      ["GET", `/v1/passports/${id}`],
      ["GET", `/v1/passports/${id}/history`],
      ["PATCH", `/v1/passports/${id}`, { display_name: "mine now" }],
      ["POST", `/v1/passports/${id}/bindings`, { class: "endpoint", value: uniqueEndpoint() }],
      ["DELETE", `/v1/passports/${id}/bindings/${created.bindings[0].id}`],
      [
        "POST",
        `/v1/passports/${id}/evidence`,
        { claim: "c", source: "s", scope: "x", observed_at: "2026-11-01T00:00:00Z" },
      ],
      ["PATCH", `/v1/passports/${id}/state`, { lifecycle: "suspended" }],
      ["POST", `/v1/passports/${id}/authority`, { action: "a", context: "c" }],
      [
        "POST",
        `/v1/passports/${id}/authority`,
        {
          action: "payments.refund",
          granted_by: { kind: "organisation", id: a.organisation, relationship: "responsible" },
          expires_at: "2099-01-01T00:00:00Z",
        },
      ],
      ["PATCH", `/v1/passports/${id}/bindings/${created.bindings[0].id}`, { environment: "staging" }],
      ["POST", `/v1/passports/${id}/transfer`, { organisation_id: b.organisation, reason: "steal" }],
      ["POST", `/v1/passports/${id}/duplicate-of`, { survivor_id: id, reason: "x" }],
      ["GET", `/v1/organisations/${a.organisation}`],
      ["PUT", `/v1/organisations/${a.organisation}/members/${b.subject}`, { role: "owner" }],
      ["POST", "/v1/passports", { family: "api", organisation_id: a.organisation, display_name: "Not yours" }],
    ];
    for (const [method, path, body] of attempts) {
      const response = await b.request(method, path, body);
      expect([400, 404], `${method} ${path}`).toContain(response.status);
    }
    const list = await b.json("GET", "/v1/passports");
    expect(list.items.map((p: { identity_id: string }) => p.identity_id)).not.toContain(id);
    const filtered = await b.json("GET", `/v1/passports?organisation_id=${a.organisation}`);
    expect(filtered.items).toEqual([]);
    expect(await organisationState(a.organisation)).toBe(before);
  });
});
