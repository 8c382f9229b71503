// A marketplace buyer's browser from the listing's "Set up your account" form post to a claimed
// API passport the resolver serves (spec 4.3), against the simulated marketplace `npm start` runs.
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { developmentToken, pagePerTest, screenshot } from "./browser.ts";

const service = inject("service");
let page: Page;
pagePerTest((fresh) => {
  page = fresh;
});

const unique = () => crypto.randomUUID().slice(0, 8);

/** The buyer subscribes on the simulated listing; the browser follows the handoff to onboarding. */
async function subscribe(scenario: string): Promise<string> {
  await page.goto(`${service.marketplace}/`);
  await page.locator("#scenario").selectOption(scenario);
  await page.getByRole("button", { name: /Subscribe/ }).click();
  await page.waitForURL((url) => url.pathname === "/dashboard/sign-in");
  const next = new URL(page.url()).searchParams.get("next") ?? "";
  const acquisition = new URLSearchParams(next.split("?")[1]).get("acquisition");
  expect(acquisition).toMatch(/^acq_/);
  // The claim reference travelled in the fragment and is now out of the address bar.
  expect(page.url()).not.toContain("claim=");
  return acquisition as string;
}

async function signInAsBuyer(token: string): Promise<void> {
  await page.getByLabel("Development token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === "/dashboard/onboarding");
}

async function signInAsNewBuyer(): Promise<string> {
  const subject = `buyer-${unique()}`;
  await signInAsBuyer(await developmentToken(subject, "owner", `org_buyer_${unique()}`));
  return subject;
}

describe("marketplace acquisition in Chromium", () => {
  it("goes from the marketplace form post to a claimed passport the resolver serves", async () => {
    // The marketplace throttles customer resolution once, so set-up takes a retry.
    const acquisition = await subscribe("throttle");
    const subject = await signInAsNewBuyer();
    expect(new URL(page.url()).searchParams.get("acquisition")).toBe(acquisition);

    // The page follows set-up by itself (in place, without reloading) until the claim step appears.
    let navigations = 0;
    page.on("framenavigated", () => navigations++);
    const runningAtFirst = (await page.locator("[data-refresh]").count()) > 0;
    if (runningAtFirst) await screenshot(page, "onboarding-progress");
    const claim = page.getByRole("button", { name: "Claim this passport" });
    await claim.waitFor({ timeout: 30_000 });
    if (runningAtFirst) expect(navigations).toBe(0);
    expect(await page.locator(".stages li", { hasText: "Customer identification" }).textContent()).toContain(
      "(attempt 2)",
    );
    const stages = await page.locator(".stages li strong").allTextContents();
    expect(stages.slice(0, 3)).toEqual([
      "Registration-token handoff",
      "Customer identification",
      "Acquisition activation (entitlement)",
    ]);
    // A cloud account seen for the first time: account and passport wait for the buyer's choice.
    expect(await page.locator(".stages li .badge").allTextContents()).toEqual([
      ...Array(4).fill("succeeded"),
      ...Array(3).fill("pending"),
      "your step",
    ]);
    // Set-up is never called complete while stages are pending: the page names them and the buyer's step.
    const pending = (await page.locator("#still-pending").textContent()) ?? "";
    expect(pending).toContain(
      "Still pending: Account and parent organisation, API passport issue or reuse, Publication to the Resolver.",
    );
    expect(pending).toContain("The last step is yours: claim the passport");
    expect(await page.locator("main").textContent()).not.toContain("Set-up is complete");
    expect(await page.locator("#claim").textContent()).toContain(subject);
    await page.getByLabel("A new organisation, with me as its owner").check();
    await screenshot(page, "onboarding-claim");

    await claim.click();
    await page.waitForURL((url) => url.pathname === "/dashboard/onboarding");
    const id = (await page.locator("#identity-id").textContent()) ?? "";
    expect(id).toMatch(/^psp_/);
    expect(await page.locator(".stages li .badge").last().textContent()).toBe("succeeded");
    const machine = page.getByRole("link", { name: "Machine-readable record (JSON)" });
    expect(await machine.getAttribute("href")).toBe(`${service.resolver}/api/p/${id}.json`);
    expect(await page.getByRole("link", { name: "Resolver proof page" }).getAttribute("href")).toBe(
      `${service.resolver}/p/${id}`,
    );
    await screenshot(page, "onboarding-done");
    // The organisation set-up made is published under a neutral name: the buyer is asked to name it.
    expect(await page.locator("#name-prompt").textContent()).toContain("Marketplace account");

    // Spec 4.3 step 10: the resolver returns the passport, of the API family.
    const record = (await (await fetch(`${service.resolver}/api/p/${id}.json`)).json()) as {
      family: string;
      state: { lifecycle: string };
    };
    expect(record).toMatchObject({ family: "api", state: { lifecycle: "active" } });

    // Step 9: the Dashboard shows the intended identity, and the buyer now owns its organisation.
    await page.getByRole("link", { name: "Open it in the Dashboard" }).click();
    expect(await page.locator("#identity-id").textContent()).toBe(id);
    expect(await page.locator("dd", { hasText: /^owner$/ }).count()).toBe(1);
  });

  it("links an existing customer's subscription to their organisation and its API passport", async () => {
    const subject = `customer-${unique()}`;
    const organisation = `org_customer_${unique()}`;
    const token = await developmentToken(subject, "owner", organisation);
    const created = await fetch(`${service.control}/v1/passports`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ organisation_id: organisation, family: "api", display_name: "Payments API" }),
    });
    expect(created.status).toBe(201);
    const existing = ((await created.json()) as { identity_id: string }).identity_id;

    await subscribe("ok");
    await signInAsBuyer(token);
    const choice = page.getByRole("radio", { name: new RegExp(organisation) });
    await choice.waitFor({ timeout: 30_000 });
    await choice.check();
    await screenshot(page, "onboarding-choose-organisation");
    await page.getByRole("button", { name: "Claim this passport" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/onboarding");

    expect(await page.locator("#identity-id").textContent()).toBe(existing);
    expect(await page.locator(".stages li", { hasText: "Account and parent organisation" }).textContent()).toContain(
      "linked to your existing organisation",
    );
    expect(await page.locator(".stages li", { hasText: "API passport issue or reuse" }).textContent()).toContain(
      "existing passport reused",
    );

    // The organisation page lists the subscription among its products and entitlements.
    await page.goto(`${service.control}/dashboard/organisations/${organisation}`);
    const subscriptions = (await page.locator("#subscriptions").textContent()) ?? "";
    expect(subscriptions).toContain("prod-passport-api");
    expect(subscriptions).toContain("active");
    await screenshot(page, "organisation-subscriptions");
  });

  it("asks which API passport to adopt when the chosen organisation has several", async () => {
    const subject = `customer-${unique()}`;
    const organisation = `org_customer_${unique()}`;
    const token = await developmentToken(subject, "owner", organisation);
    const ids: string[] = [];
    for (const display_name of ["Payments API", "Payments API (staging)"]) {
      const created = await fetch(`${service.control}/v1/passports`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ organisation_id: organisation, family: "api", display_name }),
      });
      expect(created.status).toBe(201);
      ids.push(((await created.json()) as { identity_id: string }).identity_id);
    }
    const [, staging] = ids as [string, string];

    await subscribe("ok");
    await signInAsBuyer(token);
    const organisationChoice = page.getByRole("radio", { name: new RegExp(organisation) });
    await organisationChoice.waitFor({ timeout: 30_000 });
    await organisationChoice.check();
    await page.getByRole("button", { name: "Claim this passport" }).click();

    // Without a choice, a question: both active passports are offered, the first preselected, and
    // no refusal is shown.
    const choice = page.locator("#passport-choice");
    await choice.waitFor();
    expect(await page.locator("#claim-question").textContent()).toContain(
      "2 API passports this subscription could adopt",
    );
    expect(await page.locator("#claim-problem").count()).toBe(0);
    expect(await choice.getByRole("radio", { checked: true }).count()).toBe(1);
    const options = choice.getByRole("radio");
    expect(await options.count()).toBe(2);
    expect(await choice.textContent()).toContain(ids[0]);
    await screenshot(page, "onboarding-choose-passport");
    await choice.getByRole("radio", { name: new RegExp(staging) }).check();
    await page.getByRole("button", { name: "Claim this passport" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/onboarding");

    expect(await page.locator("#identity-id").textContent()).toBe(staging);
    expect(await page.locator(".stages li", { hasText: "API passport issue or reuse" }).textContent()).toContain(
      "existing passport reused",
    );
  });

  it("shows a failed stage with its visible error, time and what to do next", async () => {
    const acquisition = await subscribe("expired");
    await signInAsNewBuyer();
    const failure = page.locator("#failure");
    await failure.waitFor({ timeout: 30_000 });
    const text = (await failure.textContent()) ?? "";
    expect(text).toContain("Set-up failed at “Customer identification”");
    expect(text).toContain("The registration token expired before set-up could use it.");
    expect(text).toContain("Contact support and send them the details below.");
    expect(await failure.locator("time").first().getAttribute("datetime")).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(await page.locator("main").textContent()).toContain(acquisition);
    // Spec 7: what to send to support, ready to copy: id, stage, time, error, cloud-account context.
    const details = (await page.locator("#support-text").textContent()) ?? "";
    expect(details).toContain(`Acquisition: ${acquisition}`);
    expect(details).toContain("Failed stage: Customer identification (customer_identification)");
    expect(details).toMatch(/Time: \d{4}-\d{2}-\d{2}T/);
    expect(details).toContain("Error: ExpiredTokenException");
    expect(details).toContain("Cloud account: not known");
    expect(await page.getByRole("button", { name: "Copy details" }).isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Claim this passport" }).count()).toBe(0);
    await screenshot(page, "onboarding-failed");
  });
});
