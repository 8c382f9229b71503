import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { shardsOf } from "../../workers/control/src/db/shards.ts";
import { ensurePassport, PassportNotAdoptable } from "../../workers/control/src/marketplace/queries/accounts.ts";
import { developmentToken } from "../support/tokens.ts";
import { api, deliver, freshAccountId, handoff, holdingsOf, organisationInShardZero, subscribe } from "./support.ts";

const PROBLEM = "urn:svc:passport:problem:";

interface ClaimView {
  account: { organisation_id: string; outcome: string } | null;
  passport: { identity_id: string; outcome: string; lifecycle: string | null } | null;
}

interface CandidateProblem {
  type: string;
  detail: string;
  passport_id?: string;
  candidates: { identity_id: string; display_name: string | null }[];
}

/** An owner's organisation with API passports of these display names, oldest first. */
async function organisationWith(names: string[]) {
  const user = await developmentToken();
  const organisationId = await organisationInShardZero(user, "Example Payments");
  const passportIds: string[] = [];
  for (const display_name of names) {
    const passport = await api(user, "POST", "/v1/passports", {
      family: "api",
      organisation_id: organisationId,
      display_name,
    });
    expect(passport.status).toBe(201);
    passportIds.push((await passport.json<{ identity_id: string }>()).identity_id);
  }
  return { user, organisationId, passportIds };
}

/** A first-time cloud account's subscription, processed by the consumer and ready to claim. */
async function processed(account = freshAccountId()) {
  const handed = await handoff((await subscribe({ customer_aws_account_id: account })).registration_token);
  expect(await deliver(handed.message)).toMatchObject({ acked: true });
  return { ...handed, account };
}

function claimInto(
  token: string,
  acquisition: { acquisitionId: string; claimReference: string },
  choice: { organisation_id?: string; passport_id?: string },
) {
  return api(token, "POST", `/v1/acquisitions/${acquisition.acquisitionId}/claim`, {
    claim_reference: acquisition.claimReference,
    ...choice,
  });
}

async function setLifecycle(token: string, id: string, lifecycle: string) {
  expect((await api(token, "PATCH", `/v1/passports/${id}/state`, { lifecycle })).status).toBe(200);
}

describe("choosing the passport a subscription adopts", { timeout: 30_000 }, () => {
  it("refuses a claim without a choice when the organisation has several, listing them, and adopts the one chosen", async () => {
    const customer = await organisationWith(["Payments API", "Payments API (staging)"]);
    const [older, newer] = customer.passportIds as [string, string];
    const acquisition = await processed();

    const refused = await claimInto(customer.user, acquisition, { organisation_id: customer.organisationId });
    expect(refused.status).toBe(409);
    const problem = await refused.json<CandidateProblem>();
    expect(problem.type).toBe(`${PROBLEM}passport-choice-required`);
    expect(problem.candidates).toEqual([
      { identity_id: older, display_name: "Payments API" },
      { identity_id: newer, display_name: "Payments API (staging)" },
    ]);
    // Nothing was set up, and the claim reference is still usable.
    expect((await holdingsOf(acquisition.account)).accounts).toHaveLength(0);

    const claimed = await claimInto(customer.user, acquisition, {
      organisation_id: customer.organisationId,
      passport_id: newer,
    });
    expect(claimed.status).toBe(200);
    expect(await claimed.json<ClaimView>()).toMatchObject({
      account: { organisation_id: customer.organisationId, outcome: "linked" },
      passport: { identity_id: newer, outcome: "reused" },
    });
    const slots = await env.DB.prepare(
      "SELECT passport_id FROM marketplace_account_passports WHERE passport_id IN (?, ?)",
    )
      .bind(older, newer)
      .all<{ passport_id: string }>();
    expect(slots.results.map((r) => r.passport_id)).toEqual([newer]);
  });

  it("refuses another organisation's passport and a suspended one, naming it, and keeps the claim usable", async () => {
    const customer = await organisationWith(["Payments API", "Old API"]);
    const [active, suspended] = customer.passportIds as [string, string];
    await setLifecycle(customer.user, suspended, "suspended");
    const stranger = await organisationWith(["Someone else's API"]);
    const [foreign] = stranger.passportIds as [string];
    const acquisition = await processed();

    for (const chosen of [foreign, suspended]) {
      const refused = await claimInto(customer.user, acquisition, {
        organisation_id: customer.organisationId,
        passport_id: chosen,
      });
      expect(refused.status).toBe(409);
      const problem = await refused.json<CandidateProblem>();
      expect(problem).toMatchObject({ type: `${PROBLEM}passport-not-adoptable`, passport_id: chosen });
      expect(problem.detail).toContain(chosen);
      // Only the active passport of the chosen organisation is offered; the foreign one is never named.
      expect(problem.candidates).toEqual([{ identity_id: active, display_name: "Payments API" }]);
    }
    // A passport cannot be chosen for a new organisation either.
    const forNew = await claimInto(customer.user, acquisition, { passport_id: active });
    expect(forNew.status).toBe(409);
    expect(await forNew.json()).toMatchObject({ type: `${PROBLEM}passport-not-adoptable`, candidates: [] });
    expect((await holdingsOf(acquisition.account)).accounts).toHaveLength(0);

    const claimed = await claimInto(customer.user, acquisition, {
      organisation_id: customer.organisationId,
      passport_id: active,
    });
    expect(claimed.status).toBe(200);
    expect((await claimed.json<ClaimView>()).passport).toMatchObject({ identity_id: active, outcome: "reused" });
  });

  it("adopts the only active passport without a choice, a suspended one not counting", async () => {
    const customer = await organisationWith(["Suspended API", "Payments API"]);
    const [suspended, active] = customer.passportIds as [string, string];
    await setLifecycle(customer.user, suspended, "suspended");
    const acquisition = await processed();

    const claimed = await claimInto(customer.user, acquisition, { organisation_id: customer.organisationId });
    expect(claimed.status).toBe(200);
    expect((await claimed.json<ClaimView>()).passport).toMatchObject({ identity_id: active, outcome: "reused" });
  });

  it("spec 1.6 and 4.3 step 8: with no passport in use, offers the suspended ones, marked, and adopts the one chosen", async () => {
    const customer = await organisationWith(["Payments API", "Payments API (old region)"]);
    const [first, second] = customer.passportIds as [string, string];
    await setLifecycle(customer.user, first, "suspended");
    await setLifecycle(customer.user, second, "suspended");
    const acquisition = await processed();

    const refused = await claimInto(customer.user, acquisition, { organisation_id: customer.organisationId });
    expect(refused.status).toBe(409);
    const problem = await refused.json<CandidateProblem>();
    expect(problem.type).toBe(`${PROBLEM}passport-choice-required`);
    expect(problem.candidates).toEqual([
      { identity_id: first, display_name: "Payments API", lifecycle: "suspended" },
      { identity_id: second, display_name: "Payments API (old region)", lifecycle: "suspended" },
    ]);
    const claimed = await claimInto(customer.user, acquisition, {
      organisation_id: customer.organisationId,
      passport_id: second,
    });
    expect(claimed.status).toBe(200);
    expect((await claimed.json<ClaimView>()).passport).toMatchObject({ identity_id: second, outcome: "reused" });
    // No second identity: the organisation holds the same two passports, both still suspended.
    const holdings = await holdingsOf(acquisition.account);
    expect(holdings.passports.map((p) => [p.id, p.lifecycle]).sort()).toEqual(
      [
        [first, "suspended"],
        [second, "suspended"],
      ].sort(),
    );
  });

  it("a returning cloud account whose passport was suspended meanwhile gets that passport again, still suspended", async () => {
    const customer = await organisationWith(["Payments API"]);
    const [only] = customer.passportIds as [string];
    const acquisition = await processed();
    expect((await claimInto(customer.user, acquisition, { organisation_id: customer.organisationId })).status).toBe(
      200,
    );
    await setLifecycle(customer.user, only, "suspended");

    const again = await processed(acquisition.account);
    const resubscribed = await claimInto(customer.user, again, {});
    expect(resubscribed.status).toBe(200);
    expect((await resubscribed.json<ClaimView>()).passport).toMatchObject({
      identity_id: only,
      outcome: "reused",
      lifecycle: "suspended",
    });
    expect((await holdingsOf(acquisition.account)).passports).toEqual([
      { id: only, family: "api", lifecycle: "suspended" },
    ]);
  });

  it("refuses a choice once the acquisition's passport is set up", async () => {
    const customer = await organisationWith(["Payments API"]);
    const acquisition = await processed();
    expect((await claimInto(customer.user, acquisition, { organisation_id: customer.organisationId })).status).toBe(
      200,
    );
    const again = await processed(acquisition.account);
    const refused = await claimInto(customer.user, again, { passport_id: customer.passportIds[0] });
    expect(refused.status).toBe(400);
  });

  it("never adopts a chosen passport suspended after the claim was checked (one conditional statement)", async () => {
    const customer = await organisationWith(["Payments API", "Second API"]);
    const [chosen] = customer.passportIds as [string];
    const accountId = `mpa_test_${crypto.randomUUID()}`;
    const account = {
      id: accountId,
      customerKey: `aws-account:${accountId}`,
      awsAccountId: freshAccountId(),
      organisationId: customer.organisationId,
      parentOrganisationId: customer.organisationId,
      createdAt: new Date().toISOString(),
    };
    await env.DB.prepare(
      "INSERT INTO marketplace_accounts (id, customer_key, aws_account_id, organisation_id, parent_organisation_id) VALUES (?, ?, ?, ?, ?)",
    )
      .bind(account.id, account.customerKey, account.awsAccountId, account.organisationId, account.parentOrganisationId)
      .run();
    // Checked by the claim as active, then suspended before the adoption runs.
    await setLifecycle(customer.user, chosen, "suspended");

    const at = new Date().toISOString();
    await expect(ensurePassport(shardsOf(env), account, "api", at, chosen)).rejects.toBeInstanceOf(
      PassportNotAdoptable,
    );
    const slot = await env.DB.prepare(
      "SELECT passport_id FROM marketplace_account_passports WHERE marketplace_account_id = ?",
    )
      .bind(accountId)
      .first();
    expect(slot).toBeNull();
  });
});
