import { env } from "cloudflare:workers";
import { PassportRecord } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { developmentToken } from "../support/tokens.ts";
import {
  api,
  claim,
  deliver,
  freshAccountId,
  handoff,
  holdingsOf,
  orphanedMarketplaceOrganisations,
  parseLocation,
  postFulfill,
  subscribe,
  waitUntilFinished,
} from "./support.ts";

interface AcquisitionView {
  status: string;
  next: string;
  stages: { stage: string; status: string; outcome: string | null }[];
  account: { organisation_id: string; parent_organisation_id: string; outcome: string } | null;
  passport: { identity_id: string; resolver_url: string; dashboard_url: string; outcome: string } | null;
  existing_account?: boolean;
}

/** The buyer's whole journey: form post, 303, the real queue, the claim. */
async function acquire(registrationToken: string, userToken: string) {
  const posted = await postFulfill(registrationToken);
  expect(posted.status).toBe(303);
  const { acquisitionId, claimReference } = parseLocation(posted.headers.get("location"));
  expect((await waitUntilFinished(acquisitionId)).status).toBe("completed");
  const claimed = await claim(userToken, acquisitionId, claimReference);
  expect(claimed.status).toBe(200);
  return { acquisitionId, claimReference, view: await claimed.json<AcquisitionView>() };
}

// Acquisitions posted through the route wait for the real queue, whose batches close after a second.
describe("marketplace acquisition", { timeout: 30_000 }, () => {
  it("takes a new customer from the form post to a claimed, resolvable API passport", async () => {
    const registration = await subscribe({ customer_aws_account_id: freshAccountId() });
    const posted = await postFulfill(registration.registration_token);
    expect(posted.status).toBe(303);
    const { url, acquisitionId, claimReference } = parseLocation(posted.headers.get("location"));
    expect(`${url.origin}${url.pathname}`).toBe(env.DASHBOARD_ONBOARDING_URL);
    expect(posted.headers.get("cache-control")).toBe("no-store");

    expect(await waitUntilFinished(acquisitionId)).toMatchObject({ status: "completed", failed_stage: null });
    const user = await developmentToken();
    const progress = await api(user, "GET", `/v1/acquisitions/${acquisitionId}`, undefined, {
      "x-claim-reference": claimReference,
    });
    expect(progress.status).toBe(200);
    const before = await progress.json<AcquisitionView>();
    // A cloud account seen for the first time: nothing is made until the claimant chooses where it belongs.
    expect(before.stages.map((s) => [s.stage, s.status])).toEqual([
      ["registration_token_handoff", "succeeded"],
      ["customer_identification", "succeeded"],
      ["activation", "succeeded"],
      ["product_mapping", "succeeded"],
    ]);
    expect(before).toMatchObject({ status: "completed", next: "claim", account: null, passport: null });
    expect((await holdingsOf(registration.customer_aws_account_id)).accounts).toHaveLength(0);

    const claimed = await claim(user, acquisitionId, claimReference);
    expect(claimed.status).toBe(200);
    const view = await claimed.json<AcquisitionView>();
    expect(view).toMatchObject({
      existing_account: false,
      account: { outcome: "created" },
      passport: { outcome: "issued" },
    });
    expect(view.stages.map((s) => [s.stage, s.status]).slice(4)).toEqual([
      ["account", "succeeded"],
      ["passport", "succeeded"],
      ["publication", "succeeded"],
      ["claim", "succeeded"],
    ]);
    const passport = view.passport as NonNullable<AcquisitionView["passport"]>;
    expect(passport.resolver_url).toBe(`${env.RESOLVER_BASE_URL}/api/p/${passport.identity_id}.json`);
    // The Dashboard page of the passport, not an API path.
    expect(passport.dashboard_url).toBe(`/dashboard/passports/${passport.identity_id}`);

    // Spec 4.3 steps 9-10: the Dashboard shows the passport, and the Resolver serves it.
    const dashboard = await api(user, "GET", `/v1/passports/${passport.identity_id}`);
    expect(dashboard.status).toBe(200);
    const resolved = await env.TEST_RESOLVER.fetch(`http://resolver.test/api/p/${passport.identity_id}.json`);
    expect(resolved.status).toBe(200);
    const record = PassportRecord.parse(await resolved.json());
    expect(record).toMatchObject({
      identity_id: passport.identity_id,
      family: "api",
      organisation: { id: view.account?.organisation_id, parent: { id: view.account?.parent_organisation_id } },
    });

    const holdings = await holdingsOf(registration.customer_aws_account_id);
    expect(holdings.accounts).toHaveLength(1);
    expect(holdings.organisations).toHaveLength(2);
    expect(holdings.passports).toEqual([{ id: passport.identity_id, family: "api", lifecycle: "active" }]);
    // The claimant owns both organisations set-up made, so they can give them real names.
    const owned = await env.DB.prepare(
      "SELECT organisation_id FROM members WHERE role = 'owner' AND organisation_id IN (?, ?)",
    )
      .bind(view.account?.organisation_id, view.account?.parent_organisation_id)
      .all();
    expect(owned.results).toHaveLength(2);
  });

  it("reuses the account, parent and passport for a returning customer's second subscription", async () => {
    const account = freshAccountId();
    const user = await developmentToken();
    const first = await acquire((await subscribe({ customer_aws_account_id: account })).registration_token, user);
    // A second agreement of the same cloud account: another license, another token.
    const second = await acquire((await subscribe({ customer_aws_account_id: account })).registration_token, user);

    expect(second.acquisitionId).not.toBe(first.acquisitionId);
    expect(second.view).toMatchObject({
      existing_account: true,
      account: { ...first.view.account, outcome: "reused" },
      passport: { identity_id: first.view.passport?.identity_id, outcome: "reused" },
    });
    const holdings = await holdingsOf(account);
    expect(holdings.accounts).toHaveLength(1);
    expect(holdings.organisations).toHaveLength(2);
    expect(holdings.passports).toHaveLength(1);
    const licenses = await env.DB.prepare("SELECT count(*) AS n FROM marketplace_customers WHERE aws_account_id = ?")
      .bind(account)
      .first<{ n: number }>();
    expect(licenses?.n).toBe(2);
  });

  it("treats the same token posted twice as one acquisition", async () => {
    const registration = await subscribe({ customer_aws_account_id: freshAccountId() });
    const first = parseLocation((await postFulfill(registration.registration_token)).headers.get("location"));
    const again = await postFulfill(registration.registration_token);
    expect(again.status).toBe(303);
    const second = parseLocation(again.headers.get("location"));

    expect(second.acquisitionId).toBe(first.acquisitionId);
    expect(await waitUntilFinished(first.acquisitionId)).toMatchObject({ status: "completed" });
    // The re-post issued a new claim reference, which replaced the first one.
    const user = await developmentToken();
    expect((await claim(user, first.acquisitionId, first.claimReference)).status).toBe(403);
    expect((await claim(user, second.acquisitionId, second.claimReference)).status).toBe(200);

    const holdings = await holdingsOf(registration.customer_aws_account_id);
    expect([holdings.accounts.length, holdings.organisations.length, holdings.passports.length]).toEqual([1, 2, 1]);
  });

  it("creates exactly one account, parent and passport from ten concurrent duplicate deliveries and claims", async () => {
    const registration = await subscribe({ customer_aws_account_id: freshAccountId() });
    const { acquisitionId, claimReference, message } = await handoff(registration.registration_token);

    const results = await Promise.all(Array.from({ length: 10 }, () => deliver(message)));
    expect(results.every((r) => r.acked && !r.retried)).toBe(true);
    expect((await holdingsOf(registration.customer_aws_account_id)).accounts).toHaveLength(0);

    // The customer double-clicks, retries, and the browser repeats the post: five claims at once
    // (the per-user claim rate limit allows ten a minute).
    const user = await developmentToken();
    const claims = await Promise.all(Array.from({ length: 5 }, () => claim(user, acquisitionId, claimReference)));
    const statuses = claims.map((r) => r.status);
    expect(statuses).toContain(200);
    expect(statuses.every((s) => s === 200 || s === 403)).toBe(true);
    // A retry after the dust settles is recognised.
    expect((await claim(user, acquisitionId, claimReference)).status).toBe(200);

    const holdings = await holdingsOf(registration.customer_aws_account_id);
    expect(holdings.accounts).toHaveLength(1);
    expect(holdings.organisations).toHaveLength(2);
    expect(holdings.passports).toHaveLength(1);
    expect(await orphanedMarketplaceOrganisations()).toBe(0);
    const state = await env.DB.prepare("SELECT status, passport_id FROM acquisitions WHERE id = ?")
      .bind(acquisitionId)
      .first<{ status: string; passport_id: string }>();
    expect(state).toEqual({ status: "completed", passport_id: holdings.passports[0]?.id });
  });

  it("keeps one account, parent, passport and owner when five tokens of one account are claimed at once by five users", async () => {
    const account = freshAccountId();
    const handoffs = await Promise.all(
      Array.from({ length: 5 }, async () =>
        handoff((await subscribe({ customer_aws_account_id: account })).registration_token),
      ),
    );
    await Promise.all(handoffs.flatMap(({ message }) => [deliver(message), deliver(message)]));
    const users = await Promise.all(handoffs.map(() => developmentToken()));
    const claims = await Promise.all(
      handoffs.map(({ acquisitionId, claimReference }, i) => claim(users[i] as string, acquisitionId, claimReference)),
    );
    expect(claims.map((r) => r.status).filter((s) => s === 200)).toHaveLength(1);
    expect(claims.every((r) => r.status === 200 || r.status === 403)).toBe(true);

    const holdings = await holdingsOf(account);
    expect([holdings.accounts.length, holdings.organisations.length, holdings.passports.length]).toEqual([1, 2, 1]);
    expect(await orphanedMarketplaceOrganisations()).toBe(0);
    const owners = await env.DB.prepare("SELECT count(*) AS n FROM members WHERE organisation_id = ?")
      .bind(holdings.accounts[0]?.organisation_id)
      .first<{ n: number }>();
    expect(owners?.n).toBe(1);
  });
});
