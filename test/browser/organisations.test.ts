// An organisation saying who it is, in a real browser: renamed and placed under its parent from
// the Dashboard, and what the resolver then publishes for its passports.
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
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

async function signIn(token: string, next: string): Promise<void> {
  await page.goto(`${service.control}${next}`);
  await expect.poll(() => new URL(page.url()).pathname).toBe("/dashboard/sign-in");
  await page.getByLabel("Development token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === next);
}

describe("organisation page in Chromium", () => {
  it("renames an organisation and sets its parent, and the resolver publishes both", async () => {
    const organisation = `org_team_${unique()}`;
    const token = await developmentToken(`owner-${unique()}`, "owner", organisation);
    const passport = await api<{ identity_id: string }>(token, "POST", "/v1/passports", {
      organisation_id: organisation,
      family: "api",
      display_name: "Payments API",
    });
    const holding = await api<{ id: string }>(token, "POST", "/v1/organisations", { name: "Example Holdings" });

    await signIn(token, `/dashboard/organisations/${organisation}`);
    await page.getByLabel("Name").fill("Example Payments Ltd");
    await page.getByLabel("Parent organisation").selectOption(holding.id);
    await page.getByLabel("Reason (kept in the history)").fill("Say who stands behind our passports");
    await page.getByRole("button", { name: "Save" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "saved");

    expect(await page.locator("h1").textContent()).toBe("Example Payments Ltd");
    expect(await page.getByRole("link", { name: "Example Holdings" }).getAttribute("href")).toBe(
      `/dashboard/organisations/${holding.id}`,
    );
    const history = (await page.locator("#organisation-history").textContent()) ?? "";
    expect(history).toContain("Organisation renamed");
    expect(history).toContain("Organisation's parent changed");
    await screenshot(page, "organisation-page");

    const record = (await (await fetch(`${service.resolver}/api/p/${passport.identity_id}.json`)).json()) as {
      organisation: { name: string; parent?: { id: string; name: string } };
    };
    expect(record.organisation).toMatchObject({
      name: "Example Payments Ltd",
      parent: { id: holding.id, name: "Example Holdings" },
    });
  });

  it("explains a refused rename beside the form and keeps what was typed", async () => {
    const organisation = `org_team_${unique()}`;
    const token = await developmentToken(`owner-${unique()}`, "owner", organisation);
    await signIn(token, `/dashboard/organisations/${organisation}`);
    await page.getByLabel("Name").fill("x".repeat(200));
    await page.getByLabel("Reason (kept in the history)").fill("y".repeat(1000));
    // An over-long reason is the API's to refuse; the browser's maxlength is bypassed on purpose.
    await page.locator("#reason").evaluate((input) => input.removeAttribute("maxlength"));
    await page.getByLabel("Reason (kept in the history)").fill("y".repeat(1001));
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("#organisation-problem").waitFor();
    expect(await page.getByLabel("Name").inputValue()).toBe("x".repeat(200));
    expect(await page.locator("h1").textContent()).toBe(organisation);
  });

  it("adds a member, changes their role, removes them, and explains the last-owner refusal", async () => {
    const organisation = `org_team_${unique()}`;
    const owner = `owner-${unique()}`;
    const token = await developmentToken(owner, "owner", organisation);
    await signIn(token, `/dashboard/organisations/${organisation}`);
    const colleague = `colleague-${unique()}`;

    await page.getByLabel("Subject (from the identity provider)").fill(colleague);
    await page.getByLabel("Role", { exact: true }).selectOption("editor");
    await page.getByRole("button", { name: "Add member" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "members");
    const row = page.locator("#members tbody tr", { hasText: colleague });
    expect(await row.locator("td").nth(1).textContent()).toBe("editor");

    await page.getByLabel(`Role of ${colleague}`).selectOption("admin");
    await row.getByRole("button", { name: "Change role" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "members");
    expect(await page.locator("#members tbody tr", { hasText: colleague }).locator("td").nth(1).textContent()).toBe(
      "admin",
    );
    await screenshot(page, "organisation-members");

    // The only owner cannot demote themselves: the refusal is shown beside the members.
    await page.getByLabel(`Role of ${owner}`).selectOption("viewer");
    await page.locator("#members tbody tr", { hasText: owner }).getByRole("button", { name: "Change role" }).click();
    await page.locator("#members-problem").waitFor();
    expect(await page.locator("#members-problem").textContent()).toContain("at least one owner");
    expect(await page.locator("#role-hint").textContent()).toContain("the last owner cannot be removed or demoted");

    await page.locator("#members tbody tr", { hasText: colleague }).getByRole("button", { name: "Remove" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "members");
    expect(await page.locator("#members tbody tr", { hasText: colleague }).count()).toBe(0);
  });

  it("reaches organisations from the header and passport pages, links a parent only for its members, and creates one", async () => {
    const holder = `org_team_${unique()}`;
    const holderToken = await developmentToken(`owner-${unique()}`, "owner", holder);
    await api(holderToken, "PATCH", `/v1/organisations/${holder}`, { name: "Example Holdings" });
    const child = await api<{ id: string }>(holderToken, "POST", "/v1/organisations", {
      name: "Example Payments",
      parent_id: holder,
    });
    const passport = await api<{ identity_id: string }>(holderToken, "POST", "/v1/passports", {
      organisation_id: child.id,
      family: "api",
      display_name: "Payments API",
    });
    // A colleague who belongs to the child only: the parent's page is not open to them (404).
    const colleague = `colleague-${unique()}`;
    const colleagueToken = await developmentToken(colleague, "viewer", `org_team_${unique()}`);
    await api(colleagueToken, "GET", "/v1/me");
    await api(holderToken, "PUT", `/v1/organisations/${child.id}/members/${colleague}`, { role: "viewer" });

    await signIn(colleagueToken, `/dashboard/passports/${passport.identity_id}`);
    const organisationLink = page.locator("#passport-organisation a");
    expect(await organisationLink.getAttribute("href")).toBe(`/dashboard/organisations/${child.id}`);
    const parent = page.locator("#passport-parent");
    expect(await parent.textContent()).toContain("Example Holdings");
    expect(await parent.textContent()).toContain("you are not a member");
    expect(await parent.locator("a").count()).toBe(0);

    await organisationLink.click();
    await page.waitForURL((url) => url.pathname === `/dashboard/organisations/${child.id}`);
    expect(await page.locator("h1").textContent()).toBe("Example Payments");
    const facts = (await page.locator("dl.facts").textContent()) ?? "";
    expect(facts).toContain("Example Holdings");
    expect(facts).toContain("you are not a member");
    expect(await page.locator("dl.facts a").count()).toBe(0);
    // The holder, a member of both, follows the parent link to a page, never a 404.
    await page.context().clearCookies();
    await signIn(holderToken, `/dashboard/organisations/${child.id}`);
    await page.locator("dl.facts").getByRole("link", { name: "Example Holdings" }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/organisations/${holder}`);
    expect(await page.locator("h1").textContent()).toBe("Example Holdings");
    expect(await page.locator("#children").getByRole("link", { name: "Example Payments" }).count()).toBe(1);

    // From the header: the organisations list, and a new organisation the creator owns.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Organisations" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/organisations");
    const rows = (await page.locator("#organisations").textContent()) ?? "";
    expect(rows).toContain("Example Holdings");
    expect(rows).toContain("Example Payments");
    // An empty name is the API's to refuse (the browser's `required` is bypassed): shown beside the field.
    await page.locator("#new-name").evaluate((input) => input.removeAttribute("required"));
    await page.getByRole("button", { name: "Create organisation" }).click();
    await page.locator("#new-name-error").waitFor();
    expect(await page.locator("#new-name").getAttribute("aria-invalid")).toBe("true");
    await page.getByLabel("Name").fill("Example Labs");
    await page.getByLabel("Parent organisation").selectOption(holder);
    await page.getByRole("button", { name: "Create organisation" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "created");
    expect(await page.locator("h1").textContent()).toBe("Example Labs");
    expect(await page.locator("dl.facts").textContent()).toContain("owner");
    expect(await page.locator("dl.facts").getByRole("link", { name: "Example Holdings" }).count()).toBe(1);
    await screenshot(page, "organisation-created");
  });

  it("edits a passport's name, relationship and separate operator, and the resolver shows both organisations", async () => {
    const organisation = `org_team_${unique()}`;
    const token = await developmentToken(`owner-${unique()}`, "owner", organisation);
    await api(token, "PATCH", `/v1/organisations/${organisation}`, { name: "Example Payments" });
    const hosting = await api<{ id: string }>(token, "POST", "/v1/organisations", { name: "Example Hosting" });
    const passport = await api<{ identity_id: string }>(token, "POST", "/v1/passports", {
      organisation_id: organisation,
      family: "api",
      display_name: "Payments API",
    });
    const id = passport.identity_id;
    await signIn(token, `/dashboard/passports/${id}`);

    const details = page.locator("#details");
    await reveal(details);
    await details.getByLabel("Display name").fill("Card Payments API");
    await details.getByLabel("Operated by another organisation").selectOption(hosting.id);
    await details.getByRole("button", { name: "Save name and organisations" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "details");
    expect(await page.locator("h1").textContent()).toBe("Card Payments API");
    expect(await page.locator("#passport-operator").getByRole("link", { name: "Example Hosting" }).count()).toBe(1);
    await screenshot(page, "passport-operator");
    const record = (await (await fetch(`${service.resolver}/api/p/${id}.json`)).json()) as {
      display_name: string;
      organisation: { id: string; relationship: string };
      operator?: { id: string; name: string };
    };
    expect(record).toMatchObject({
      display_name: "Card Payments API",
      organisation: { id: organisation, relationship: "responsible" },
      operator: { id: hosting.id, name: "Example Hosting" },
    });
    const proof = await (await fetch(`${service.resolver}/p/${id}`)).text();
    expect(proof).toContain("Operated by");
    expect(proof).toContain("Example Hosting");

    // "Operates it" beside a separate operator is refused beside the operator field, keeping the choice.
    await reveal(page.locator("#details"));
    await page.locator("#details").getByLabel("Example Payments's relationship").selectOption("operator");
    await page.locator("#details").getByRole("button", { name: "Save name and organisations" }).click();
    await page.locator("#details-operator_organisation_id-error").waitFor();
    expect(await page.locator("#details-operator_organisation_id-error").textContent()).toContain(
      "needs relationship responsible",
    );
    expect(await page.locator("#details-relationship").inputValue()).toBe("operator");

    await page.locator("#details").getByLabel("Operated by another organisation").selectOption("");
    await page.locator("#details").getByRole("button", { name: "Save name and organisations" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "details");
    expect(await page.locator("#passport-operator").count()).toBe(0);
    expect(await page.locator("#passport-organisation").textContent()).toContain("(operator)");
    const after = await currentRecord<{
      record_version: number;
      organisation: { relationship: string };
      operator?: unknown;
    }>(service, id, token);
    expect(after.organisation.relationship).toBe("operator");
    expect(after.operator).toBeUndefined();
  });

  it("offers a passport's consumers a copyable verify command and SDK call with pinned keys", async () => {
    const organisation = `org_team_${unique()}`;
    const token = await developmentToken(`owner-${unique()}`, "owner", organisation);
    const passport = await api<{ identity_id: string }>(token, "POST", "/v1/passports", {
      organisation_id: organisation,
      family: "api",
      display_name: "Shared API",
    });
    await signIn(token, `/dashboard/passports/${passport.identity_id}`);

    const cli = (await page.locator("#share-cli").textContent()) ?? "";
    expect(cli).toContain(
      `passport verify ${passport.identity_id} --family api --org ${organisation} --jwks passport-keys.json --resolver ${service.resolver}`,
    );
    const sdk = (await page.locator("#share-sdk").textContent()) ?? "";
    expect(sdk).toContain(
      `verifier.verify("${passport.identity_id}", { family: "api", organisation: "${organisation}" })`,
    );
    expect(sdk).toContain("jwks: pinnedKeySet");
    // Sharing is in the Settings and sharing section, opened as a person opens it.
    await reveal(page.locator("#share-cli"));
    expect(await page.getByRole("button", { name: "Copy command" }).isVisible()).toBe(true);
    // The keys the command pins are really served where it says.
    const keysUrl = /curl -fsS -o passport-keys.json (\S+)/.exec(cli)?.[1] ?? "";
    const keys = (await (await fetch(keysUrl)).json()) as { keys: unknown[] };
    expect(keys.keys.length).toBeGreaterThan(0);
  });
});
