// The rest of a customer's journey in a real browser: creating a passport, its authority context,
// moving responsibility, marking a duplicate, and the organisation's products and entitlements;
// each checked against what the resolver then serves.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { root } from "../local-service.ts";
import { callControl, currentRecord, developmentToken, pagePerTest, screenshot } from "./browser.ts";
import { reveal } from "./sections.ts";

const service = inject("service");
let page: Page;
pagePerTest((fresh) => {
  page = fresh;
});

const unique = () => crypto.randomUUID().slice(0, 8);

const api = <T>(token: string, method: string, path: string, body?: unknown) =>
  callControl<T>(service.control, token, method, path, body);

interface ResolverRecord {
  display_name?: string;
  organisation: { id: string; name: string };
  bindings: { class: string; value: string }[];
  state: { lifecycle: string; environment?: string; version?: string; duplicate_of?: string };
  authority?: { action: string; context?: string; expires_at?: string; granted_by?: unknown }[];
  record_version: number;
}

/** The record once the resolver serves the version the control plane published (docs/freshness.md). */
function resolverRecord(id: string, token: string): Promise<ResolverRecord> {
  return currentRecord<ResolverRecord>(service, id, token);
}

async function signIn(token: string, next: string): Promise<void> {
  await page.goto(`${service.control}${next}`);
  await expect.poll(() => new URL(page.url()).pathname).toBe("/dashboard/sign-in");
  await page.getByLabel("Development token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === next);
}

/** An owner of a fresh organisation, and one API passport in it made through the API. */
async function ownerWithPassport(name: string) {
  const organisation = `org_journey_${unique()}`;
  const token = await developmentToken(`owner-${unique()}`, "owner", organisation);
  const passport = await api<{ identity_id: string }>(token, "POST", "/v1/passports", {
    organisation_id: organisation,
    family: "api",
    display_name: name,
    bindings: [{ class: "endpoint", value: `https://${unique()}.journey.example/v1` }],
  });
  return { organisation, token, id: passport.identity_id };
}

describe("the customer's journey in Chromium", () => {
  it("refuses an empty create beside the name field and creates nothing", async () => {
    const organisation = `org_journey_${unique()}`;
    const token = await developmentToken(`owner-${unique()}`, "owner", organisation);
    await signIn(token, "/dashboard/passports/new");
    await page.getByRole("button", { name: "Create passport" }).click();
    await page.locator("#create-display_name-error").waitFor();
    expect(await page.locator("#create-display_name-error").textContent()).toContain(
      "name the passport or give it a binding",
    );
    expect(await page.getByLabel("Name", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    expect(new URL(page.url()).pathname).toBe("/dashboard/passports/new");
    const list = await api<{ items: unknown[] }>(token, "GET", `/v1/passports?organisation_id=${organisation}`);
    expect(list.items).toEqual([]);
  });

  it("creates a passport from the form, and shows a duplicate with a link and the distinct-object option", async () => {
    const organisation = `org_journey_${unique()}`;
    const token = await developmentToken(`owner-${unique()}`, "owner", organisation);
    const endpoint = `https://orders-${unique()}.journey.example/v1`;
    await signIn(token, "/dashboard/passports/new");
    await page.getByLabel("Responsible organisation").selectOption(organisation);
    await page.getByLabel("Family").selectOption("api");
    await page.getByLabel("Name", { exact: true }).fill("Orders API");
    await page.getByLabel("Primary binding (optional)").fill(endpoint);
    await page.getByLabel("Another binding (optional)").selectOption("documentation");
    await page.getByLabel("Its value").fill("https://docs.journey.example/orders");
    await page.getByLabel("Environment (optional)").fill("production");
    await page.getByLabel("Version (optional)").fill("2026.11");
    await screenshot(page, "passport-new");
    await page.getByRole("button", { name: "Create passport" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "created");

    const id = (await page.locator("#identity-id").textContent()) ?? "";
    expect(id).toMatch(/^psp_/);
    expect(await page.locator("h1").textContent()).toBe("Orders API");
    expect(await page.locator(".notice").textContent()).toContain("Passport created.");
    const record = await resolverRecord(id, token);
    expect(record).toMatchObject({
      display_name: "Orders API",
      organisation: { id: organisation },
      state: { lifecycle: "active", environment: "production", version: "2026.11" },
    });
    // The record lists bindings by class, then value.
    expect(record.bindings.map((b) => [b.class, b.value])).toEqual([
      ["documentation", "https://docs.journey.example/orders"],
      ["endpoint", endpoint],
    ]);

    // The same primary binding again: refused, with a link to the passport that holds it.
    await page.goto(`${service.control}/dashboard/passports/new`);
    await page.getByLabel("Responsible organisation").selectOption(organisation);
    await page.getByLabel("Name", { exact: true }).fill("Orders admin API");
    await page.getByLabel("Primary binding (optional)").fill(endpoint);
    await page.getByRole("button", { name: "Create passport" }).click();
    await page.locator("#create-problem").waitFor();
    expect(await page.locator("#create-problem").textContent()).toContain("Another passport already identifies");
    expect(await page.getByRole("link", { name: /Open the existing passport/ }).getAttribute("href")).toBe(
      `/dashboard/passports/${id}`,
    );
    expect(await page.getByLabel("Name", { exact: true }).inputValue()).toBe("Orders admin API");
    await screenshot(page, "passport-new-duplicate");

    // Declared a materially distinct object, it is created, and the reason is in its history.
    await page.getByLabel("Why it is a distinct object").fill("Admin interface with its own responsibility");
    await page.getByRole("button", { name: "Create passport" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "created");
    const second = (await page.locator("#identity-id").textContent()) ?? "";
    expect(second).not.toBe(id);
    expect((await resolverRecord(second, token)).bindings.map((b) => b.value)).toEqual([endpoint]);
  });

  it("creates a passport at phone width with the keyboard alone", async () => {
    const organisation = `org_journey_${unique()}`;
    const token = await developmentToken(`owner-${unique()}`, "owner", organisation);
    await signIn(token, "/dashboard/passports/new");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // From the family select, Tab reaches the name; Enter in a field submits the form.
    await page.getByLabel("Family").focus();
    await page.keyboard.press("Tab");
    await page.keyboard.type("Keyboard API");
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.searchParams.get("done") === "created");
    expect(await page.locator("h1").textContent()).toBe("Keyboard API");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const id = (await page.locator("#identity-id").textContent()) ?? "";
    expect((await resolverRecord(id, token)).display_name).toBe("Keyboard API");
  });

  it("adds structured authority, expires it and removes it, and the resolver follows each step", async () => {
    const { organisation, token, id } = await ownerWithPassport("Refunds API");
    await signIn(token, `/dashboard/passports/${id}`);
    await reveal(page.locator("#authority-add"));
    await page.getByLabel("Action", { exact: true }).fill("payments.refund");
    // The passport's organisation is the grantor offered first; the API checks the owner's role.
    expect(await page.getByLabel("Granted by", { exact: true }).inputValue()).toBe(
      `organisation|responsible|${organisation}`,
    );
    await page.getByLabel("Resource (optional)").fill("org:demo/merchants/eu/*");
    await page.getByLabel("Amount limit (optional)").fill("500.00");
    await page.getByLabel("Currency", { exact: true }).fill("eur");
    await page.getByLabel("Rate limit (optional): at most").fill("20");
    await page.getByLabel("actions per").selectOption("day");
    await page.getByLabel("Context", { exact: true }).fill("EU merchants only");
    // Without an end date a grant is refused beside the field, and what was typed stays.
    await page.getByRole("button", { name: "Add authority" }).click();
    expect(await page.locator("#authority-add-expires_at-error").textContent()).toContain("required");
    expect(await page.getByLabel("Amount limit (optional)").inputValue()).toBe("500.00");
    await page.getByLabel("Until (UTC)").fill("2099-01-01T00:00");
    await page.getByRole("button", { name: "Add authority" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "authority-added");
    const entry = page.locator("#authority-list li", { hasText: "payments.refund" });
    const shown = (await entry.textContent()) ?? "";
    expect(shown).toContain("until 2099-01-01 00:00:00 UTC");
    expect(shown).toContain("up to 500.00 EUR");
    expect(shown).toContain("at most 20 per day");
    expect(shown).toContain("responsible organisation, owner");
    const [granted] = (await resolverRecord(id, token)).authority ?? [];
    expect(granted).toEqual({
      action: "payments.refund",
      scope: {
        resource: "org:demo/merchants/eu/*",
        limits: { amount: { value: "500.00", currency: "EUR" }, rate: { count: 20, per: "day" } },
      },
      granted_by: { kind: "organisation", id: organisation, relationship: "responsible", role: "owner" },
      granted_at: expect.any(String),
      expires_at: "2099-01-01T00:00:00.000Z",
      context: "EU merchants only",
    });
    await screenshot(page, "passport-authority");

    await entry.getByRole("button", { name: "Expire authority for payments.refund now" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "authority-expired");
    expect(await page.locator("#authority-list li", { hasText: "payments.refund" }).textContent()).toContain("expired");
    const expired = (await resolverRecord(id, token)).authority?.[0]?.expires_at ?? "";
    expect(Date.parse(expired)).toBeLessThanOrEqual(Date.now());

    await page
      .locator("#authority-list li", { hasText: "payments.refund" })
      .getByRole("button", { name: "Remove authority for payments.refund" })
      .click();
    await page.waitForURL((url) => url.searchParams.get("done") === "authority-removed");
    expect(await page.locator("#authority-list").count()).toBe(0);
    expect((await resolverRecord(id, token)).authority).toBeUndefined();
    const history = (await page.locator(".timeline").textContent()) ?? "";
    for (const step of ["Authority context added", "Authority context expired", "Authority context removed"]) {
      expect(history).toContain(step);
    }

    // The share block's badge is what the resolver draws for this passport.
    const snippet = (await page.locator("#share-badge").textContent()) ?? "";
    const badgeUrl = `${service.resolver}/api/p/${id}/badge.svg`;
    expect(snippet).toContain(`<img src="${badgeUrl}"`);
    const badge = await fetch(badgeUrl);
    expect(badge.headers.get("content-type")).toContain("image/svg+xml");
    expect(await badge.text()).toContain("<title>API passport: active · not verified</title>");
  });

  it("moves responsibility to another organisation the owner holds, with the reason", async () => {
    const { organisation, token, id } = await ownerWithPassport("Ledger API");
    const platform = await api<{ id: string }>(token, "POST", "/v1/organisations", { name: `Platform ${unique()}` });
    await signIn(token, `/dashboard/passports/${id}`);
    expect(await page.locator("#transfer-roles").textContent()).toContain("owner role here and in the receiving");
    await reveal(page.locator("#transfer"));
    await page.getByLabel("Receiving organisation").selectOption(platform.id);
    await page.locator("#transfer-reason").fill("Ledger moved to platform");
    await screenshot(page, "passport-responsibility");
    await page.getByRole("button", { name: "Move responsibility" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "transferred");

    expect(await page.locator("#identity-id").textContent()).toBe(id);
    const history = (await page.locator(".timeline").textContent()) ?? "";
    expect(history).toContain("Responsibility moved");
    expect(history).toContain("reason: Ledger moved to platform");
    expect(history).toContain(`${organisation} → ${platform.id}`);
    const record = await resolverRecord(id, token);
    expect(record.organisation.id).toBe(platform.id);

    // An editor of the organisation sees neither responsibility control.
    const editor = await developmentToken(`editor-${unique()}`, "editor", platform.id);
    await page.context().clearCookies();
    await signIn(editor, `/dashboard/passports/${id}`);
    expect(await page.locator("#responsibility").count()).toBe(0);
    expect(await page.getByRole("button", { name: /Move responsibility|Retire as a duplicate/ }).count()).toBe(0);
  });

  it("marks a duplicate pointing at the surviving passport, and the resolver retires it", async () => {
    const { organisation, token, id: survivor } = await ownerWithPassport("Search API");
    const duplicate = await api<{ identity_id: string }>(token, "POST", "/v1/passports", {
      organisation_id: organisation,
      family: "api",
      display_name: "Search API (old)",
    });
    await signIn(token, `/dashboard/passports/${duplicate.identity_id}`);

    // The organisation's other active API passports are suggested as survivors.
    expect(await page.locator(`#duplicate-survivors option[value="${survivor}"]`).textContent()).toBe("Search API");
    expect(await page.locator(`#duplicate-survivors option[value="${duplicate.identity_id}"]`).count()).toBe(0);

    // A survivor that is not a well-formed id is refused beside its field.
    await reveal(page.locator("#duplicate"));
    await page.getByLabel("Identity id of the surviving passport").fill("psp_not-an-id");
    await page.locator("#duplicate-reason").fill("Same search service");
    await page.getByRole("button", { name: "Retire as a duplicate" }).click();
    await page.getByLabel("I understand this is final and cannot be undone").check();
    await page.getByRole("button", { name: "Retire as a duplicate for good" }).click();
    await page.locator("#duplicate-survivor_id-error").waitFor();
    expect(await page.getByLabel("Identity id of the surviving passport").getAttribute("aria-invalid")).toBe("true");

    await page.getByLabel("Identity id of the surviving passport").fill(survivor);
    await page.getByRole("button", { name: "Retire as a duplicate" }).click();
    // Final: a confirmation step names the survivor and asks for the box to be ticked.
    expect(await page.locator("#final-consequence").textContent()).toContain(survivor);
    expect((await resolverRecord(duplicate.identity_id, token)).state.lifecycle).toBe("active");
    await page.getByLabel("I understand this is final and cannot be undone").check();
    await page.getByRole("button", { name: "Retire as a duplicate for good" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "duplicate");
    expect(await page.locator("#lifecycle-status").textContent()).toBe("retired");
    expect(await page.getByRole("link", { name: survivor }).getAttribute("href")).toBe(
      `/dashboard/passports/${survivor}`,
    );
    expect(await page.locator("main form").count()).toBe(0);
    const record = await resolverRecord(duplicate.identity_id, token);
    expect(record.state).toMatchObject({ lifecycle: "retired", duplicate_of: survivor });
    expect((await resolverRecord(survivor, token)).state.lifecycle).toBe("active");
  });

  it("revokes only after a confirmation step with a reason, which the history keeps", async () => {
    const { token, id } = await ownerWithPassport("Ledger API");
    await signIn(token, `/dashboard/passports/${id}`);
    await page.locator("#lifecycle").getByRole("button", { name: "Revoke" }).click();

    // One click changes nothing: a page of its own says what will happen.
    expect(await page.locator("h1").textContent()).toBe("Revoke “Ledger API”?");
    expect(await page.locator("#final-consequence").textContent()).toContain("This is final.");
    expect(await page.getByRole("link", { name: "Cancel" }).getAttribute("href")).toBe(`/dashboard/passports/${id}`);
    expect((await resolverRecord(id, token)).state.lifecycle).toBe("active");
    await screenshot(page, "passport-revoke-confirm");

    // Without a reason or the box ticked (the browser's `required` bypassed), it is refused beside each.
    await page.locator("#confirm-final input[required]").evaluateAll((inputs) => {
      for (const input of inputs) input.removeAttribute("required");
    });
    await page.getByRole("button", { name: "Revoke for good" }).click();
    await page.locator("#confirm-reason-error").waitFor();
    expect(await page.locator("#confirm-final-error").textContent()).toContain("tick this box");
    expect(await page.getByLabel("Reason (public in the history)").getAttribute("aria-invalid")).toBe("true");
    expect((await resolverRecord(id, token)).record_version).toBe(1);

    await page.getByLabel("Reason (public in the history)").fill("Signing key exposed in a public log");
    await page.getByLabel("I understand this is final and cannot be undone").check();
    await page.getByRole("button", { name: "Revoke for good" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "lifecycle");
    expect(await page.locator("#lifecycle-status").textContent()).toBe("revoked");
    expect(await page.locator("ol.timeline li").first().textContent()).toContain(
      "reason: Signing key exposed in a public log",
    );
    expect((await resolverRecord(id, token)).state.lifecycle).toBe("revoked");
    // Retiring, the only step left, asks again.
    await page.locator("#lifecycle").getByRole("button", { name: "Retire" }).click();
    expect(await page.locator("h1").textContent()).toBe("Retire “Ledger API”?");
  });

  it("shows an organisation's products and entitlements with their history, to its members only", async () => {
    // A new buyer subscribes on the simulated listing and claims into a new organisation.
    await page.goto(`${service.marketplace}/`);
    await page.locator("#scenario").selectOption("ok");
    await page.getByRole("button", { name: /Subscribe/ }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/sign-in");
    const buyer = await developmentToken(`buyer-${unique()}`, "owner", `org_buyer_${unique()}`);
    await page.getByLabel("Development token").fill(buyer);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByLabel("A new organisation, with me as its owner").check({ timeout: 30_000 });
    await page.getByRole("button", { name: "Claim this passport" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/onboarding");
    const passport = (await page.locator("#identity-id").textContent()) ?? "";
    const { items } = await api<{ items: { id: string; name: string }[] }>(buyer, "GET", "/v1/organisations");
    const organisation = items.find((o) => o.name === "Marketplace account")?.id ?? "";
    const { subscriptions } = await api<{ subscriptions: { aws_account_id: string; license_arn: string }[] }>(
      buyer,
      "GET",
      `/v1/organisations/${organisation}/subscriptions`,
    );
    const [subscription] = subscriptions;
    if (!subscription) throw new Error("the claimed organisation holds no subscription");

    // The marketplace reports the agreement ended, as EventBridge delivers it.
    const secrets = JSON.parse(readFileSync(join(root, ".wrangler", "dev-auth", "marketplace.json"), "utf8"));
    const event = await fetch(`${service.control}/marketplace/events`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secrets.MARKETPLACE_EVENTS_SECRET}` },
      body: JSON.stringify({
        version: "0",
        id: crypto.randomUUID(),
        "detail-type": "Purchase Agreement Ended - Manufacturer",
        source: "aws.agreement-marketplace",
        account: "123456789012",
        time: new Date(Date.now() + 1000).toISOString(),
        region: "us-east-1",
        resources: [],
        detail: {
          agreement: { id: `agmt-${unique()}`, intent: "NEW", status: "ENDED" },
          acceptor: { accountId: subscription.aws_account_id },
          product: { code: "prod-passport-api" },
          licenseArn: subscription.license_arn,
        },
      }),
    });
    expect(event.status).toBe(200);

    await page.goto(`${service.control}/dashboard/organisations/${organisation}`);
    const products = page.locator("#subscriptions");
    expect(await products.locator(".badge").first().textContent()).toBe("ended");
    expect(await products.locator(".subscription-events li").first().textContent()).toContain(
      "Purchase Agreement Ended",
    );
    const setUp = (await products.locator("#acquisitions").textContent()) ?? "";
    expect(setUp).toContain("Acquisition activation (entitlement): succeeded");
    expect(setUp).toContain("completed");
    await screenshot(page, "organisation-products");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // An ended entitlement never removes the identity: the resolver still serves the passport.
    expect((await resolverRecord(passport, buyer)).state.lifecycle).toBe("active");

    // Someone from another organisation finds no such organisation.
    const outsider = await developmentToken(`outsider-${unique()}`, "owner", `org_other_${unique()}`);
    await page.context().clearCookies();
    await page.goto(`${service.control}/dashboard/organisations/${organisation}`);
    await page.getByLabel("Development token").fill(outsider);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/organisations/${organisation}`);
    expect(await page.locator("h1").textContent()).toBe("Organisation not found");
    expect(await page.locator("main").textContent()).not.toContain("prod-passport-api");
    const response = await fetch(`${service.control}/v1/organisations/${organisation}/subscriptions`, {
      headers: { authorization: `Bearer ${outsider}` },
    });
    expect(response.status).toBe(404);
  });
});
