import { describe, expect, it } from "vitest";
import { type Body, Caller, uniqueEndpoint } from "../support/api.ts";

type Page = { items: { identity_id: string; display_name: string | null }[]; next_cursor: string | null };

const ids = (page: Page) => page.items.map((p) => p.identity_id);

describe("GET /v1/passports?q= (server-side search)", () => {
  it("finds passports by display name, identity id and binding value, by word prefix, in creation order", async () => {
    const owner = await Caller.create("owner");
    const endpoint = uniqueEndpoint();
    const billing = await owner.createPassport({ display_name: "Billing API", environment: "production" });
    const ledger = await owner.createPassport({
      display_name: "Ledger",
      bindings: [{ class: "endpoint", value: endpoint }],
    });
    const invoices = await owner.createPassport({ display_name: "Billing invoices" });
    const search = (q: string) =>
      owner.json<Page>("GET", `/v1/passports?organisation_id=${owner.organisation}&q=${encodeURIComponent(q)}`);

    expect(ids(await search("billing"))).toEqual([billing.identity_id, invoices.identity_id]);
    expect(ids(await search("BILL inv"))).toEqual([invoices.identity_id]);
    expect(ids(await search(billing.identity_id.slice(0, 12)))).toEqual([billing.identity_id]);
    expect(ids(await search(new URL(endpoint).hostname))).toEqual([ledger.identity_id]);
    expect(ids(await search("production"))).toEqual([billing.identity_id]);
    expect(ids(await search("nothing-like-this"))).toEqual([]);
  });

  it("follows renames, binding changes and filters, and pages with its own cursor", async () => {
    const owner = await Caller.create("owner");
    const created: Body[] = [];
    for (const environment of ["staging", "production", "staging", "staging"]) {
      created.push(await owner.createPassport({ display_name: "Paged service", environment }));
    }
    const all = `/v1/passports?organisation_id=${owner.organisation}&q=paged`;
    const base = `${all}&limit=2`;
    const first = await owner.json<Page>("GET", base);
    expect(ids(first)).toEqual(created.slice(0, 2).map((p) => p.identity_id));
    if (!first.next_cursor) throw new Error("expected a second page");
    const second = await owner.json<Page>("GET", `${base}&cursor=${first.next_cursor}`);
    expect(ids(second)).toEqual(created.slice(2).map((p) => p.identity_id));
    expect(second.next_cursor).toBeNull();
    const staging = await owner.json<Page>("GET", `${all}&environment=staging`);
    expect(ids(staging)).toEqual([0, 2, 3].map((i) => created[i]?.identity_id));

    const [renamed] = created;
    if (!renamed) throw new Error("nothing created");
    await owner.json("PATCH", `/v1/passports/${renamed.identity_id}`, { display_name: "Relabelled" });
    const endpoint = uniqueEndpoint();
    const bound = await owner.json("POST", `/v1/passports/${renamed.identity_id}/bindings`, {
      class: "endpoint",
      value: endpoint,
    });
    const byHost = `/v1/passports?organisation_id=${owner.organisation}&q=${new URL(endpoint).hostname}`;
    expect(ids(await owner.json<Page>("GET", all))).not.toContain(renamed.identity_id);
    expect(ids(await owner.json<Page>("GET", `/v1/passports?q=relabelled`))).toEqual([renamed.identity_id]);
    expect(ids(await owner.json<Page>("GET", byHost))).toEqual([renamed.identity_id]);
    await owner.json("DELETE", `/v1/passports/${renamed.identity_id}/bindings/${bound.bindings[0].id}`);
    expect(ids(await owner.json<Page>("GET", byHost))).toEqual([]);
    // A list cursor is not a search cursor.
    const list = await owner.json<Page>("GET", `/v1/passports?organisation_id=${owner.organisation}&limit=1`);
    expect((await owner.request("GET", `${base}&cursor=${list.next_cursor}`)).status).toBe(400);
    expect((await owner.request("GET", "/v1/passports?q=%20--%20")).status).toBe(400);
  });

  it("never matches another organisation's passports, named or not", async () => {
    const owner = await Caller.create("owner");
    const stranger = await Caller.create("owner");
    const word = `tenant${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
    const mine = await owner.createPassport({ display_name: `${word} mine` });
    const theirs = await stranger.createPassport({ display_name: `${word} theirs` });
    expect(ids(await owner.json<Page>("GET", `/v1/passports?q=${word}`))).toEqual([mine.identity_id]);
    expect(ids(await stranger.json<Page>("GET", `/v1/passports?q=${word}`))).toEqual([theirs.identity_id]);
    // Naming the other organisation finds nothing: the caller is not a member there.
    expect(
      ids(await owner.json<Page>("GET", `/v1/passports?organisation_id=${stranger.organisation}&q=${word}`)),
    ).toEqual([]);
    expect(ids(await owner.json<Page>("GET", `/v1/passports?organisation_id=${stranger.organisation}`))).toEqual([]);
    // Searching another organisation's identity id finds nothing either.
    expect(ids(await owner.json<Page>("GET", `/v1/passports?q=${theirs.identity_id}`))).toEqual([]);
  });

  it("moves with a transfer: the old organisation no longer finds it, the new one does", async () => {
    const owner = await Caller.create("owner");
    const target = await Caller.create("owner", undefined, owner.subject);
    const word = `moved${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
    const moved = await owner.createPassport({ display_name: word });
    await owner.json("POST", `/v1/passports/${moved.identity_id}/transfer`, {
      organisation_id: target.organisation,
      reason: "Reorganisation",
    });
    const inOrganisation = (organisation: string) =>
      owner.json<Page>("GET", `/v1/passports?organisation_id=${organisation}&q=${word}`);
    expect(ids(await inOrganisation(owner.organisation))).toEqual([]);
    expect(ids(await inOrganisation(target.organisation))).toEqual([moved.identity_id]);
  });

  it("searches every organisation of a member of several, merged in creation order", async () => {
    const owner = await Caller.create("owner");
    const word = `multi${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
    const second = await Caller.create("owner", undefined, owner.subject);
    const a = await owner.createPassport({ display_name: `${word} a` });
    const b = await second.createPassport({ display_name: `${word} b` });
    const c = await owner.createPassport({ display_name: `${word} c` });
    const page = await second.json<Page>("GET", `/v1/passports?q=${word}&limit=2`);
    expect(ids(page)).toEqual([a.identity_id, b.identity_id]);
    const rest = await second.json<Page>("GET", `/v1/passports?q=${word}&limit=2&cursor=${page.next_cursor}`);
    expect(ids(rest)).toEqual([c.identity_id]);
    const list = await second.json<Page>("GET", "/v1/passports?limit=200");
    expect(ids(list)).toEqual([a.identity_id, b.identity_id, c.identity_id]);
  });
});
