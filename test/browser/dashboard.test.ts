// The Dashboard in a real browser against the local service `npm start` runs: what a customer
// does with their passports, and what the resolver then publishes.
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { callControl, currentRecord, developmentToken, pagePerTest, screenshot } from "./browser.ts";
import { reveal } from "./sections.ts";

const service = inject("service");
let page: Page;
const browser = pagePerTest((fresh) => {
  page = fresh;
});

const unique = () => crypto.randomUUID().slice(0, 8);

const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
  callControl<T>(service.control, service.token, method, path, body);

/** A fresh API passport in the demo organisation, created through the Dashboard API. */
async function newPassport(name: string): Promise<{ id: string; endpoint: string }> {
  const endpoint = `https://${name.toLowerCase().replace(/\W+/g, "-")}-${unique()}.demo.example/v1`;
  const created = await api("POST", "/v1/passports", {
    organisation_id: "org_demo",
    family: "api",
    display_name: name,
    environment: "production",
    bindings: [{ class: "endpoint", value: endpoint }],
  });
  return { id: created.identity_id as string, endpoint };
}

interface ResolverRecord {
  record_version: number;
  state: { lifecycle: string; recheck_required?: boolean };
  bindings: { class: string; value: string }[];
  evidence: { claim: string; source: string }[];
}

/** The record once the resolver serves the version the control plane published (docs/freshness.md). */
function resolverRecord(id: string, token = service.token): Promise<ResolverRecord> {
  return currentRecord<ResolverRecord>(service, id, token);
}

async function signIn(token: string, next = "/dashboard/passports"): Promise<void> {
  await page.goto(`${service.control}${next}`);
  await expect.poll(() => new URL(page.url()).pathname).toBe("/dashboard/sign-in");
  await page.getByLabel("Development token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === next);
}

describe("Dashboard in Chromium", () => {
  it("signs in with the development token, then finds passports by filter and search", async () => {
    const { id } = await newPassport(`Browser Search ${unique()}`);
    await page.goto(`${service.control}/`);
    await page.waitForURL((url) => url.pathname === "/dashboard/sign-in");
    await screenshot(page, "sign-in");

    await page.getByLabel("Development token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("Your sign-in has expired");
    expect(await page.getByLabel("Development token").getAttribute("aria-invalid")).toBe("true");

    await page.getByLabel("Development token").fill(service.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/passports");
    expect(await page.locator("header").textContent()).toContain("dev-owner");
    const cookies = await browser().context.cookies(service.control);
    const session = cookies.find((c) => c.name === "passport-session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax" });
    await screenshot(page, "passports");

    await page.getByLabel("Family").selectOption("agent");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL((url) => url.searchParams.get("family") === "agent");
    const families = await page.locator("td[data-label=Family]").allTextContents();
    expect(families.length).toBeGreaterThan(0);
    expect(new Set(families)).toEqual(new Set(["agent"]));

    await page.goto(`${service.control}/dashboard/passports`);
    await page.getByLabel("Search").fill("browser search");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL((url) => url.searchParams.get("q") === "browser search");
    expect(await page.locator("tbody td[data-label='Identity id']").allTextContents()).toContain(id);

    await page.getByLabel("Search").fill(id);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/passports/${id}`);
    expect(await page.locator("#identity-id").textContent()).toBe(id);
  });

  it("edits a binding, adds evidence, suspends and reactivates, and the resolver's record follows", async () => {
    const { id, endpoint } = await newPassport("Browser Lifecycle API");
    const before = await resolverRecord(id);
    await signIn(service.token, `/dashboard/passports/${id}`);

    const moved = endpoint.replace("/v1", "/v2");
    const bindings = page.locator("section", { has: page.getByRole("heading", { name: "Bindings" }) });
    // The Bindings section, then the binding's "Edit", as a person opens them.
    await reveal(
      bindings.locator("li", { hasText: endpoint }).getByLabel("New value for this endpoint / base url binding"),
    );
    await page.getByLabel("New value for this endpoint / base url binding").fill(moved);
    await page.getByRole("button", { name: "Save binding" }).click();
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("Binding updated.");
    const edited = await resolverRecord(id);
    expect(edited.bindings.filter((b) => b.class === "endpoint").map((b) => b.value)).toEqual([moved]);
    expect(edited.record_version).toBeGreaterThan(before.record_version);

    const evidence = page.locator("#evidence-add");
    await reveal(evidence);
    await evidence.getByLabel("Claim it supports").fill("endpoint-control");
    await evidence.getByLabel("Source").fill("DNS TXT record check");
    await evidence.getByLabel("Scope").fill(new URL(moved).hostname);
    await evidence.getByLabel("Fresh until (UTC, optional)").fill("2099-01-01T00:00");
    await evidence.getByRole("button", { name: "Add evidence" }).click();
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("Evidence added.");
    const row = page.locator("tr", { hasText: "endpoint-control" });
    expect(await row.locator(".badge").textContent()).toBe("fresh");
    expect((await resolverRecord(id)).evidence).toEqual([
      expect.objectContaining({ claim: "endpoint-control", source: "DNS TXT record check" }),
    ]);

    const lifecycle = page.locator("#lifecycle");
    expect(await lifecycle.getByRole("button").allTextContents()).toEqual(["Suspend", "Revoke", "Retire"]);
    await lifecycle.getByLabel("Reason (recorded in the history)").fill("planned maintenance");
    await lifecycle.getByRole("button", { name: "Suspend" }).click();
    expect(await page.locator("#lifecycle-status").textContent()).toBe("suspended");
    expect((await resolverRecord(id)).state.lifecycle).toBe("suspended");
    // Only the transitions a suspended passport allows are offered.
    expect(await page.locator("#lifecycle").getByRole("button").allTextContents()).toEqual([
      "Reactivate",
      "Revoke",
      "Retire",
    ]);

    await page.locator("#lifecycle").getByRole("button", { name: "Reactivate" }).click();
    expect(await page.locator("#lifecycle-status").textContent()).toBe("active");
    expect((await resolverRecord(id)).state).toMatchObject({ lifecycle: "active", recheck_required: true });
    await screenshot(page, "passport");

    // The flag is never cleared by a click (docs/lifecycle.md#re-evaluation): the page says what the
    // re-evaluation waits for, and the button asks for the checks; the flag clears once they pass
    // (test/control/reactivation.test.ts runs the scheduler that clears it).
    expect(await page.locator("#recheck-claims").textContent()).toContain("endpoint-control");
    expect(await page.getByRole("button", { name: "I re-checked the bindings and evidence" }).count()).toBe(0);
    await page.getByRole("button", { name: "Re-check now" }).click();
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("Re-check requested");
    expect((await resolverRecord(id)).state.recheck_required).toBe(true);

    const timeline = await page.locator(".timeline li strong").allTextContents();
    expect(timeline.slice(0, 4)).toEqual(["Reactivated", "Lifecycle changed", "Evidence added", "Binding removed"]);
  });

  it("shows a viewer no edit controls, and refuses a forged form post", async () => {
    const { id } = await newPassport("Browser Viewer API");
    const viewer = await developmentToken(`viewer-${unique()}`, "viewer");
    await signIn(viewer, `/dashboard/passports/${id}`);
    expect(await page.locator("dd", { hasText: /^viewer$/ }).count()).toBe(1);
    expect(await page.locator("main form").count()).toBe(0);
    expect(await page.getByRole("button", { name: /Suspend|Remove|Add binding|Add evidence/ }).count()).toBe(0);
    await screenshot(page, "passport-viewer");

    // The viewer rebuilds the suspend form by hand, with their own valid form token: the
    // Dashboard API still refuses, and says so.
    const record = await resolverRecord(id);
    await page.evaluate(
      ({ id, version }) => {
        const csrf = (document.querySelector("input[name=csrf]") as HTMLInputElement).value;
        const form = document.createElement("form");
        form.method = "post";
        form.action = `/dashboard/passports/${id}/lifecycle`;
        for (const [name, value] of Object.entries({ csrf, record_version: String(version), lifecycle: "suspended" })) {
          const input = document.createElement("input");
          input.type = "hidden";
          input.name = name;
          input.value = value;
          form.append(input);
        }
        document.body.append(form);
        form.submit();
      },
      { id, version: record.record_version },
    );
    await page.waitForLoadState("load");
    const refusal = await page.locator(".problem[role=alert]").last().textContent();
    expect(refusal).toContain("Your role does not allow this.");
    expect(refusal).toContain("forbidden");
    expect((await resolverRecord(id)).state.lifecycle).toBe("active");

    // A page on another origin of the same site (cookies travel with its posts) forges the form:
    // the Origin check refuses it before the API is asked.
    const attacker = createServer((_request, response) => {
      response.setHeader("content-type", "text/html");
      response.end(
        `<form method="post" action="${service.control}/dashboard/passports/${id}/lifecycle">` +
          `<input name="lifecycle" value="suspended"><button>Win a prize</button></form>`,
      );
    }).listen(0, "127.0.0.1");
    await once(attacker, "listening");
    try {
      await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith(`/dashboard/passports/${id}/lifecycle`)),
        page.getByRole("button", { name: "Win a prize" }).click(),
      ]);
      expect(response.status()).toBe(403);
      expect(await response.text()).toContain("posted from another site");
    } finally {
      attacker.close();
    }
    expect((await resolverRecord(id)).state.lifecycle).toBe("active");
  });

  it("shows the API's problem details readably beside the field they concern", async () => {
    const { id } = await newPassport("Browser Errors API");
    const other = await newPassport("Browser Errors Other API");
    await signIn(service.token, `/dashboard/passports/${id}`);
    const form = page.locator("#binding-add");
    await reveal(form);

    await form.getByLabel("Class").selectOption("endpoint");
    await form.getByLabel("Value").fill("not a url");
    await form.getByRole("button", { name: "Add binding" }).click();
    const value = page.locator("#binding-add").getByLabel("Value");
    expect(await value.getAttribute("aria-invalid")).toBe("true");
    expect(await value.inputValue()).toBe("not a url");
    expect(await page.locator("#binding-add-value-error").textContent()).toBe(
      "a endpoint binding must be an http(s) URL of the API or agent endpoint",
    );
    expect(await value.getAttribute("aria-describedby")).toContain("binding-add-value-error");
    await screenshot(page, "passport-error");

    await page.locator("#binding-add").getByLabel("Value").fill(other.endpoint);
    await page.locator("#binding-add").getByRole("button", { name: "Add binding" }).click();
    const problem = await page.locator("#binding-add-problem").textContent();
    expect(problem).toContain("Another passport already identifies this object.");
    expect(problem).toContain(other.id);
    expect((await resolverRecord(id)).bindings).toHaveLength(1);
  });

  it("opens a passport on what a customer came for: name, state, id and main actions on the first screen at 1280 px", async () => {
    const { id } = await newPassport("Browser First Screen API");
    await signIn(service.token, `/dashboard/passports/${id}`);
    const viewport = page.viewportSize() ?? { width: 0, height: 0 };
    expect(viewport.width).toBe(1280);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    // In view without scrolling: the name, the state badge, the id, the lifecycle actions, and the
    // whole overview above the sections.
    for (const selector of ["h1", "#lifecycle-status", "#identity-id", "#lifecycle", "#proof-status", ".section-nav"]) {
      const box = await page.locator(selector).boundingBox();
      expect(box, selector).not.toBeNull();
      expect((box?.y ?? 0) + (box?.height ?? 0), selector).toBeLessThanOrEqual(viewport.height);
    }
    expect(await page.locator("#lifecycle-status").textContent()).toBe("active");
    // The id is one piece, never broken across lines, so it is read and copied whole.
    expect(await page.locator("#identity-id").evaluate((code) => code.getClientRects().length)).toBe(1);
    // The sections are closed until a person opens one; the section navigation opens it.
    expect(await page.locator("section.fold details[open]").count()).toBe(0);
    expect(await page.locator("#evidence-add").isVisible()).toBe(false);
    await page
      .locator(".section-nav")
      .getByRole("link", { name: /^Evidence/ })
      .click();
    await page.locator("#evidence").waitFor({ state: "visible" });
    // Its form is behind "Add an evidence item".
    expect(await page.locator("#evidence-add").isVisible()).toBe(false);
    await page.getByText("Add an evidence item").click();
    expect(await page.locator("#evidence-add").isVisible()).toBe(true);
  });

  it("fits every Dashboard page into 390 px, every section and form of a passport open, each navigation on one line", async () => {
    const { id } = await newPassport("Browser Narrow Screen API with a rather long name for a phone");
    const agent = service.demo.find((p) => p.family === "agent")?.id ?? "";
    await signIn(service.token);
    await page.setViewportSize({ width: 390, height: 844 });
    const paths = [
      "/dashboard/passports",
      "/dashboard/passports?family=agent",
      "/dashboard/passports/new",
      `/dashboard/passports/${id}`,
      `/dashboard/passports/${agent}`,
      "/dashboard/organisations",
      "/dashboard/organisations/org_demo",
    ];
    for (const path of paths) {
      await page.goto(`${service.control}${path}`);
      await page.evaluate(() => {
        for (const disclosure of document.querySelectorAll("details")) disclosure.open = true;
      });
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(390);
      for (const nav of await page.locator("header nav, .section-nav").all()) {
        const lines = await nav.evaluate((element) => {
          const tops = new Set(
            [...element.querySelectorAll("a")].map((a) => Math.round(a.getBoundingClientRect().top)),
          );
          return tops.size;
        });
        expect(lines, `${path}: a navigation wraps`).toBe(1);
      }
    }
    await page.context().clearCookies();
    await page.goto(`${service.control}/dashboard/sign-in`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth), "sign-in").toBeLessThanOrEqual(390);
  });

  it("works at phone width with the keyboard, under a strict Content-Security-Policy", async () => {
    const { id } = await newPassport("Browser Phone API");
    await signIn(service.token, `/dashboard/passports/${id}`);
    await page.setViewportSize({ width: 390, height: 844 });
    const response = await page.reload();
    const policy = response?.headers()["content-security-policy"] ?? "";
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("form-action 'self'");
    expect(policy).not.toContain("unsafe-inline");
    // Nothing wider than the screen, so nothing needs sideways scrolling.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
    expect(outline).toBe("solid");
    await screenshot(page, "passport-phone");
  });

  it("loads its stylesheet and script from the assets layer, cached for good under content-hash URLs", async () => {
    await page.goto(`${service.control}/dashboard/sign-in`);
    const hrefs = [
      await page.locator('link[rel="stylesheet"]').getAttribute("href"),
      await page.locator("script[src]").getAttribute("src"),
    ];
    expect(hrefs).toEqual([
      expect.stringMatching(/^\/assets\/dashboard\.css\?v=[0-9a-f]{12}$/),
      expect.stringMatching(/^\/assets\/dashboard\.js\?v=[0-9a-f]{12}$/),
    ]);
    for (const href of hrefs) {
      const response = await fetch(`${service.control}${href}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toContain("immutable");
      const hash = createHash("sha256")
        .update(Buffer.from(await response.arrayBuffer()))
        .digest("hex");
      expect(hash.startsWith(new URL(href ?? "", service.control).searchParams.get("v") ?? "-")).toBe(true);
    }
    // Any other path is the Worker's, even one that looks like a static file.
    for (const path of ["/assets/missing.css", "/_headers"]) {
      const response = await fetch(`${service.control}${path}`);
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type"), path).toContain("application/problem+json");
    }
  });
});
