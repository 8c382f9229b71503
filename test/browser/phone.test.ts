// The public pages at phone width (390 px): the resolver's proof page, which anyone a passport is
// shared with opens, and the simulated marketplace listing a buyer starts from. Nothing may be wider
// than the screen, so nothing needs sideways scrolling.
import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { callControl, pagePerTest, screenshot } from "./browser.ts";

const service = inject("service");
let page: Page;
pagePerTest((fresh) => {
  page = fresh;
});

const unique = () => crypto.randomUUID().slice(0, 8);
const PHONE = { width: 390, height: 844 };

async function expectFitsPhone(url: string): Promise<void> {
  await page.setViewportSize(PHONE);
  await page.goto(url);
  // A page without a device-width viewport is laid out 980 px wide on a phone and shrunk.
  expect(await page.locator('meta[name="viewport"]').getAttribute("content")).toContain("width=device-width");
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
}

describe("public pages at phone width in Chromium", () => {
  it("fits the resolver's proof page of a passport with long bindings, evidence and authority", async () => {
    const api = <T>(method: string, path: string, body?: unknown) =>
      callControl<T>(service.control, service.token, method, path, body);
    const host = `a-rather-long-service-name-for-phones-${unique()}.payments.demo.example`;
    const created = await api<{ identity_id: string }>("POST", "/v1/passports", {
      organisation_id: "org_demo",
      family: "api",
      display_name: "Cross-border settlement and reconciliation API for marketplace sellers",
      environment: "production-eu-west-1",
      version: "2026.11.24-build.5121",
      bindings: [
        { class: "endpoint", value: `https://${host}/v1/settlements/reconciliation` },
        { class: "openapi", value: `https://${host}/.well-known/openapi/settlements-reconciliation.json` },
        { class: "gateway", value: "arn:aws:apigateway:eu-west-1::/restapis/a1b2c3d4e5/stages/production" },
      ],
    });
    const id = created.identity_id;
    await api("POST", `/v1/passports/${id}/evidence`, {
      claim: "organisation.domain_control_of_the_settlement_host",
      source: "Independent audit of the settlement platform's DNS and TLS configuration",
      scope: `https://${host}/ and every path below it`,
      reference: `https://audits.demo.example/reports/settlements/${unique()}/domain-control-and-tls.pdf`,
      observed_at: new Date(Date.now() - 60_000).toISOString(),
    });
    await api("POST", `/v1/passports/${id}/authority`, {
      action: "payments.settlement.reconcile_and_release_held_funds",
      context: "EU marketplace sellers only, batches up to 10,000 EUR, business days 06:00-22:00 CET",
      scope: {
        resource: "org:demo-payments/marketplace-sellers/eu-and-eea-regions/*",
        limits: { amount: { value: "10000.00", currency: "EUR" }, rate: { count: 500, per: "day" } },
      },
      granted_by: { kind: "organisation", id: "org_demo", relationship: "responsible" },
      expires_at: "2099-01-01T00:00:00Z",
    });
    await expectFitsPhone(`${service.resolver}/p/${id}`);
    await screenshot(page, "resolver-proof-phone");
  });

  it("fits the simulated marketplace listing", async () => {
    await expectFitsPhone(`${service.marketplace}/`);
    expect(await page.getByRole("button", { name: /Subscribe/ }).isVisible()).toBe(true);
  });
});
