import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { developmentToken } from "../support/tokens.ts";
import { api, claimInto, freshAccountId, holdingsOf, organisationInShardZero, processed } from "./support.ts";

interface ClaimView {
  account: { organisation_id: string; parent_organisation_id: string; outcome: string } | null;
  passport: { identity_id: string; outcome: string } | null;
  existing_account?: boolean;
}

/** A customer who already uses the Dashboard: an organisation under a parent, with an API passport. */
async function existingCustomer() {
  const user = await developmentToken();
  const parentId = await organisationInShardZero(user, "Example Holdings");
  const organisation = await api(user, "POST", "/v1/organisations", { name: "Example Payments", parent_id: parentId });
  expect(organisation.status).toBe(201);
  const organisationId = (await organisation.json<{ id: string }>()).id;
  const passport = await api(user, "POST", "/v1/passports", {
    family: "api",
    organisation_id: organisationId,
    display_name: "Existing API",
  });
  expect(passport.status).toBe(201);
  const passportId = (await passport.json<{ identity_id: string }>()).identity_id;
  return { user, parentId, organisationId, passportId };
}

async function organisationCount(): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM organisations").first<{ n: number }>())?.n ?? 0;
}

async function passportsIn(organisationId: string): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT id FROM passports WHERE organisation_id = ? ORDER BY id")
    .bind(organisationId)
    .all<{ id: string }>();
  return rows.results.map((r) => r.id);
}

describe("an existing customer's subscription", { timeout: 30_000 }, () => {
  it("is linked to the organisation they choose, reusing its parent and its API passport", async () => {
    const customer = await existingCustomer();
    const account = freshAccountId();
    const { acquisitionId, claimReference } = await processed(account);
    const organisationsBefore = await organisationCount();

    const claimed = await claimInto(customer.user, acquisitionId, claimReference, customer.organisationId);
    expect(claimed.status).toBe(200);
    expect(await claimed.json<ClaimView>()).toMatchObject({
      existing_account: true,
      account: {
        organisation_id: customer.organisationId,
        parent_organisation_id: customer.parentId,
        outcome: "linked",
      },
      passport: { identity_id: customer.passportId, outcome: "reused" },
    });
    expect(await organisationCount()).toBe(organisationsBefore);
    expect(await passportsIn(customer.organisationId)).toEqual([customer.passportId]);

    // Resubscription: a second agreement of the same cloud account lands in the same place.
    const again = await processed(account);
    const resubscribed = await claimInto(customer.user, again.acquisitionId, again.claimReference);
    expect(resubscribed.status).toBe(200);
    expect(await resubscribed.json<ClaimView>()).toMatchObject({
      existing_account: true,
      account: { organisation_id: customer.organisationId, outcome: "reused" },
      passport: { identity_id: customer.passportId, outcome: "reused" },
    });

    // A second user of the same cloud account is refused, not given a second account.
    const third = await processed(account);
    const outsider = await developmentToken();
    expect((await claimInto(outsider, third.acquisitionId, third.claimReference)).status).toBe(403);

    const holdings = await holdingsOf(account);
    expect(holdings.accounts).toHaveLength(1);
    expect(holdings.passports.map((p) => p.id)).toEqual([customer.passportId]);
    expect(await organisationCount()).toBe(organisationsBefore);

    // Products and entitlements: the organisation's members see its subscriptions; others do not.
    const organisation = await api(customer.user, "GET", `/v1/organisations/${customer.organisationId}`);
    const { subscriptions } = await organisation.json<{ subscriptions: Record<string, unknown>[] }>();
    expect(subscriptions).toHaveLength(3);
    for (const subscription of subscriptions) {
      expect(subscription).toMatchObject({
        aws_account_id: account,
        product_code: "prod-passport-api",
        status: "active",
      });
    }
    expect((await api(outsider, "GET", `/v1/organisations/${customer.organisationId}`)).status).toBe(404);
  });

  it("uses the organisation itself as the parent when it has none, and issues a passport only when it has none", async () => {
    const user = await developmentToken();
    const organisationId = await organisationInShardZero(user, "Standalone Ltd");
    const { acquisitionId, claimReference } = await processed(freshAccountId());

    const claimed = await claimInto(user, acquisitionId, claimReference, organisationId);
    expect(claimed.status).toBe(200);
    const view = await claimed.json<ClaimView>();
    expect(view).toMatchObject({
      account: { organisation_id: organisationId, parent_organisation_id: organisationId, outcome: "linked" },
      passport: { outcome: "issued" },
    });
    expect(await passportsIn(organisationId)).toEqual([view.passport?.identity_id]);
  });

  it("spec 1.6, 3 and 4.3 step 8: adopts the organisation's only API passport while it is suspended, which stays suspended; no second identity", async () => {
    const customer = await existingCustomer();
    const revoked = await api(customer.user, "POST", "/v1/passports", {
      family: "api",
      organisation_id: customer.organisationId,
      display_name: "Retired API",
    });
    expect(revoked.status).toBe(201);
    const revokedId = (await revoked.json<{ identity_id: string }>()).identity_id;
    for (const [id, lifecycle] of [
      [customer.passportId, "suspended"],
      [revokedId, "revoked"],
    ]) {
      expect((await api(customer.user, "PATCH", `/v1/passports/${id}/state`, { lifecycle })).status).toBe(200);
    }
    const { acquisitionId, claimReference } = await processed(freshAccountId());

    const claimed = await claimInto(customer.user, acquisitionId, claimReference, customer.organisationId);
    expect(claimed.status).toBe(200);
    const view = await claimed.json<ClaimView & { passport: { lifecycle?: string } | null }>();
    // The suspended passport is the same logical object: adopted, never replaced, never reactivated by the claim.
    expect(view.passport).toMatchObject({
      identity_id: customer.passportId,
      outcome: "reused",
      lifecycle: "suspended",
    });
    expect((await passportsIn(customer.organisationId)).sort()).toEqual([customer.passportId, revokedId].sort());
    const stage = await env.DB.prepare(
      "SELECT outcome FROM acquisition_stages WHERE acquisition_id = ? AND stage = 'passport'",
    )
      .bind(acquisitionId)
      .first<{ outcome: string }>();
    expect(stage?.outcome).toContain("stays suspended until you reactivate it");
    const state = await env.DB.prepare("SELECT lifecycle FROM passports WHERE id = ?")
      .bind(customer.passportId)
      .first<{ lifecycle: string }>();
    expect(state?.lifecycle).toBe("suspended");
  });

  it("spec 3 and 1.6: never repurposes a revoked passport; the new one's creation names the passport it follows", async () => {
    const customer = await existingCustomer();
    expect(
      (await api(customer.user, "PATCH", `/v1/passports/${customer.passportId}/state`, { lifecycle: "revoked" }))
        .status,
    ).toBe(200);
    const { acquisitionId, claimReference } = await processed(freshAccountId());

    const claimed = await claimInto(customer.user, acquisitionId, claimReference, customer.organisationId);
    expect(claimed.status).toBe(200);
    const view = await claimed.json<ClaimView>();
    expect(view.passport?.outcome).toBe("issued");
    expect([customer.passportId]).not.toContain(view.passport?.identity_id);
    const created = await env.DB.prepare(
      "SELECT detail FROM events WHERE passport_id = ? AND kind = 'passport.created'",
    )
      .bind(view.passport?.identity_id)
      .first<{ detail: string }>();
    expect(JSON.parse(created?.detail ?? "{}")).toMatchObject({ follows: customer.passportId });
    const stage = await env.DB.prepare(
      "SELECT outcome FROM acquisition_stages WHERE acquisition_id = ? AND stage = 'passport'",
    )
      .bind(acquisitionId)
      .first<{ outcome: string }>();
    expect(stage?.outcome).toContain(`follows ${customer.passportId} (revoked)`);
  });

  it("refuses an organisation where the claimant is not owner or admin, and keeps the reference usable", async () => {
    const customer = await existingCustomer();
    const editor = await developmentToken();
    const editorSubject = JSON.parse(atob((editor.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/"))).sub;
    const added = await api(
      customer.user,
      "PUT",
      `/v1/organisations/${customer.organisationId}/members/${editorSubject}`,
      {
        role: "editor",
      },
    );
    expect(added.status).toBeLessThan(300);
    const stranger = await developmentToken();
    const account = freshAccountId();
    const { acquisitionId, claimReference } = await processed(account);

    const asEditor = await claimInto(editor, acquisitionId, claimReference, customer.organisationId);
    expect(asEditor.status).toBe(403);
    const asStranger = await claimInto(stranger, acquisitionId, claimReference, customer.organisationId);
    expect(asStranger.status).toBe(403);
    expect((await holdingsOf(account)).accounts).toHaveLength(0);

    const asOwner = await claimInto(customer.user, acquisitionId, claimReference, customer.organisationId);
    expect(asOwner.status).toBe(200);
  });

  it("refuses an organisation that already holds another cloud account, leaving the claim usable", async () => {
    const customer = await existingCustomer();
    const first = await processed(freshAccountId());
    expect(
      (await claimInto(customer.user, first.acquisitionId, first.claimReference, customer.organisationId)).status,
    ).toBe(200);
    const otherAccount = freshAccountId();
    const second = await processed(otherAccount);
    const refused = await claimInto(
      customer.user,
      second.acquisitionId,
      second.claimReference,
      customer.organisationId,
    );
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ type: "urn:svc:passport:problem:organisation-already-linked" });
    expect((await holdingsOf(otherAccount)).accounts).toHaveLength(0);

    // The same user finishes the claim into a new organisation instead.
    const retried = await claimInto(customer.user, second.acquisitionId, second.claimReference);
    expect(retried.status).toBe(200);
    expect(await retried.json<ClaimView>()).toMatchObject({ account: { outcome: "created" } });
  });

  it("links exactly one organisation when two users of one cloud account claim into their own at once", async () => {
    const [a, b] = await Promise.all([existingCustomer(), existingCustomer()]);
    const account = freshAccountId();
    const [first, second] = await Promise.all([processed(account), processed(account)]);
    const organisationsBefore = await organisationCount();

    const results = await Promise.all([
      claimInto(a.user, first.acquisitionId, first.claimReference, a.organisationId),
      claimInto(b.user, second.acquisitionId, second.claimReference, b.organisationId),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);

    const holdings = await holdingsOf(account);
    expect(holdings.accounts).toHaveLength(1);
    const winner = holdings.accounts[0]?.organisation_id === a.organisationId ? a : b;
    expect(holdings.accounts[0]?.organisation_id).toBe(winner.organisationId);
    expect(holdings.passports.map((p) => p.id)).toEqual([winner.passportId]);
    expect(await organisationCount()).toBe(organisationsBefore);
  });
});
