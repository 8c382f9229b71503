// Proven bindings in a real browser against the local service `npm start` runs: add a binding,
// follow the instructions the Dashboard gives, verify, and see the proof in the Dashboard and on
// the resolver's proof page.
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { callControl, currentRecord, pagePerTest } from "./browser.ts";
import { reveal } from "./sections.ts";

const service = inject("service");
let page: Page;
pagePerTest((fresh) => {
  page = fresh;
});

const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
  callControl<T>(service.control, service.token, method, path, body);

describe("Proven bindings in Chromium", () => {
  it("the demo agent started verified: its envelope is current and names the organisation", async () => {
    const agent = service.demo.find((p) => p.family === "agent");
    const response = await fetch(`${service.resolver}/api/agent-envelope?target=${agent?.id}`);
    const envelope = (await response.json()) as Record<string, unknown>;
    expect(envelope).toMatchObject({ posture: "current", identity_id: agent?.id, organisation: { id: "org_demo" } });
  });

  it("sets a binding's own environment and version, which the record and the proof page show", async () => {
    const created = await api<{ identity_id: string }>("POST", "/v1/passports", {
      organisation_id: "org_demo",
      family: "api",
      display_name: "Staging endpoint API",
      environment: "production",
      bindings: [{ class: "endpoint", value: `https://staging-${crypto.randomUUID().slice(0, 8)}.demo.example/v1` }],
    });
    const id = created.identity_id;
    const record = async () =>
      (
        await currentRecord<{ record_version: number; bindings: { environment?: string; version?: string }[] }>(
          service,
          id,
        )
      ).bindings[0];
    await page.goto(`${service.control}/dashboard/passports/${id}`);
    await page.waitForURL((url) => url.pathname === "/dashboard/sign-in");
    await page.getByLabel("Development token").fill(service.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/passports/${id}`);

    // The Bindings section, then the binding's "Environment and version", as a person opens them.
    await reveal(page.getByLabel(/^Environment of /));
    await page.getByLabel(/^Environment of /).fill("staging");
    await page.getByLabel(/^Version of /).fill("2.5.0-rc.1");
    await page.getByRole("button", { name: "Save environment and version" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "binding-context");
    expect(await page.locator(".binding-context").textContent()).toContain("staging, version 2.5.0-rc.1");
    expect(await record()).toMatchObject({ environment: "staging", version: "2.5.0-rc.1" });
    await page.goto(`${service.resolver}/p/${id}`);
    expect(await page.locator("body").textContent()).toContain("staging, version 2.5.0-rc.1");

    // Emptying a field clears it: the passport's own environment applies again.
    await page.goto(`${service.control}/dashboard/passports/${id}`);
    // The Bindings section, then the binding's "Environment and version", as a person opens them.
    await reveal(page.getByLabel(/^Environment of /));
    await page.getByLabel(/^Environment of /).fill("");
    await page.getByRole("button", { name: "Save environment and version" }).click();
    await page.waitForURL((url) => url.searchParams.get("done") === "binding-context");
    const cleared = await record();
    expect(cleared?.environment).toBeUndefined();
    expect(cleared?.version).toBe("2.5.0-rc.1");
  });

  it("adds a binding, follows the instructions, verifies, and sees it verified in the Dashboard and on the proof page", async () => {
    const host = `browser-${crypto.randomUUID().slice(0, 8)}.demo.example`;
    const created = await api<{ identity_id: string }>("POST", "/v1/passports", {
      organisation_id: "org_demo",
      family: "api",
      display_name: "Browser Proof API",
    });
    const id = created.identity_id;
    await page.goto(`${service.control}/dashboard/passports/${id}`);
    await page.waitForURL((url) => url.pathname === "/dashboard/sign-in");
    await page.getByLabel("Development token").fill(service.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/passports/${id}`);

    const add = page.locator("#binding-add");
    await reveal(add);
    await add.getByLabel("Class").selectOption("endpoint");
    await add.getByLabel("Value").fill(`https://${host}/v1`);
    await add.getByRole("button", { name: "Add binding" }).click();
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("Binding added.");
    const binding = page.locator("li", { hasText: `https://${host}/v1` });
    expect(await binding.locator(".binding-proof").textContent()).toContain("Claimed");

    await binding.getByRole("button", { name: /^Verify binding / }).click();
    const outcome = page.locator(".check-outcome");
    expect(await outcome.textContent()).toContain(
      `https://${host}/.well-known/passport-identity.json answered HTTP 404`,
    );
    const document = JSON.parse((await outcome.locator("pre.instructions").textContent()) ?? "");
    expect(document.identities[0].identity_id).toBe(id);

    // Publish exactly what the Dashboard said, on the simulated host.
    const published = await fetch(`${service.hosts}/hosts/${host}`, {
      method: "PUT",
      body: JSON.stringify({
        paths: { "/.well-known/passport-identity.json": { content_type: "application/json", body: document } },
      }),
    });
    expect(published.status).toBe(204);

    await page
      .locator("li", { hasText: `https://${host}/v1` })
      .getByRole("button", { name: /^Verify binding / })
      .click();
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("Binding verified.");
    const proof = await page
      .locator("li", { hasText: `https://${host}/v1` })
      .locator(".binding-proof")
      .textContent();
    expect(proof).toContain("Verified (well-known document)");
    expect(proof).toContain("verified by http_well_known");

    await page.goto(`${service.resolver}/p/${id}`);
    const row = page.locator("tr", { hasText: `https://${host}/v1` });
    expect(await row.textContent()).toContain("verified: well-known document on the bound origin");
  });

  it("the demo agent's signing key is proven at start, and the Payments API's page lists the agent that declares it", async () => {
    const agent = service.demo.find((p) => p.family === "agent");
    const payments = service.demo.find((p) => p.name === "Demo Payments API");
    const record = (await (await fetch(`${service.resolver}/api/p/${agent?.id}.json`)).json()) as {
      bindings: { class: string; verification: { state: string }; keys?: { thumbprint: string }[] }[];
      uses?: { identity_id: string }[];
    };
    const keys = record.bindings.find((b) => b.class === "signing_keys");
    expect(keys?.verification.state).toBe("verified");
    expect(keys?.keys?.[0]?.thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(record.uses?.map((u) => u.identity_id)).toContain(payments?.id);

    await page.goto(`${service.control}/dashboard/passports/${payments?.id}`);
    await page.waitForURL((url) => url.pathname === "/dashboard/sign-in");
    await page.getByLabel("Development token").fill(service.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === `/dashboard/passports/${payments?.id}`);
    const declarers = page.locator('section[aria-labelledby="declarers-heading"]');
    expect(await declarers.textContent()).toContain("Demo Support Agent");

    // From the agent's page: declare another API, see it listed, remove it again.
    const orders = service.demo.find((p) => p.name === "Demo Orders API (staging)");
    await page.goto(`${service.control}/dashboard/passports/${agent?.id}`);
    const add = page.locator("#uses-add");
    await reveal(add);
    await add.getByLabel("Identity id").fill(orders?.id ?? "");
    await add.getByRole("button", { name: "Declare use" }).click();
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("Use declared.");
    const listed = page.locator("#uses-list li", { hasText: orders?.id ?? "" });
    await listed.getByRole("button", { name: `Stop declaring use of ${orders?.id}` }).click();
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("Use no longer declared.");
    expect(await page.locator("#uses-list").textContent()).not.toContain(orders?.id ?? "");
  });
});
