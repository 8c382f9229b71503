// The new-passport page offers only the families the member's role may create
// (docs/api-passports.md): API passports come through the marketplace, and only owners and admins
// create one directly.
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { developmentToken, pagePerTest } from "./browser.ts";

const service = inject("service");
let page: Page;
pagePerTest((fresh) => {
  page = fresh;
});

const unique = () => crypto.randomUUID().slice(0, 8);

async function signIn(token: string, next: string): Promise<void> {
  await page.goto(`${service.control}${next}`);
  await expect.poll(() => new URL(page.url()).pathname).toBe("/dashboard/sign-in");
  await page.getByLabel("Development token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === next);
}

const familyOptions = () => page.getByLabel("Family").locator("option").allTextContents();

describe("the new-passport page's families in Chromium", () => {
  it("offers an editor only agent passports, says why, and creates one", async () => {
    const organisation = `org_families_${unique()}`;
    await signIn(await developmentToken(`editor-${unique()}`, "editor", organisation), "/dashboard/passports/new");
    expect(await familyOptions()).toEqual(["Agent passport"]);
    expect(await page.locator("#family-note").textContent()).toContain(
      "API passports come through your marketplace subscription",
    );
    await page.getByLabel("Responsible organisation").selectOption(organisation);
    await page.getByLabel("Name", { exact: true }).fill("Support agent");
    await page.getByRole("button", { name: "Create passport" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "created");
    expect(await page.locator("h1").textContent()).toBe("Support agent");
  });

  it("offers an owner both families, without the note", async () => {
    const organisation = `org_families_${unique()}`;
    await signIn(await developmentToken(`owner-${unique()}`, "owner", organisation), "/dashboard/passports/new");
    expect(await familyOptions()).toEqual(["API passport", "Agent passport"]);
    expect(await page.locator("#family-note").count()).toBe(0);
  });
});
