import { exports } from "cloudflare:workers";
import { mintIdentityId, PROBLEM_TYPE_BASE } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { aggregate, BASE, publish } from "./support/records.ts";

const page = (path: string) => exports.default.fetch(`${BASE}${path}`);

describe("GET /p/{identity_id}", () => {
  it("shows a person the same record: family, organisation, state with its as-of time, bindings, evidence, JSON link", async () => {
    const record = await publish(
      aggregate({
        parent: { id: "org_parent", name: "Parent Holdings" },
        passport: { family: "agent", displayName: "Support Agent", stateAsOf: "2026-10-21T08:30:00.000Z" },
        bindings: [
          {
            class: "manifest",
            value: "https://agents.example.com/support/manifest.json",
            label: null,
            boundAt: "2026-10-20T09:00:00.000Z",
          },
          {
            class: "package",
            value: "npm:@example/support-agent",
            label: "npm package",
            boundAt: "2026-10-20T09:00:00.000Z",
          },
        ],
        evidence: [
          {
            id: "ev_fresh",
            claim: "organisation.domain_control",
            source: "DNS TXT record check",
            scope: "agents.example.com",
            reference: null,
            observedAt: "2026-10-20T09:00:00.000Z",
            freshUntil: "2099-01-01T00:00:00.000Z",
            withdrawnAt: null,
          },
          {
            id: "ev_old",
            claim: "binding.manifest_reachable",
            source: "Manifest fetch",
            scope: "manifest URL only",
            reference: null,
            observedAt: "2020-01-01T00:00:00.000Z",
            freshUntil: "2020-02-01T00:00:00.000Z",
            withdrawnAt: null,
          },
        ],
      }),
    );
    const response = await page(`/p/${record.identity_id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(response.headers.get("cache-tag")).toBe(`passport-${record.identity_id}`);
    const html = await response.text();
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toContain("<script");
    for (const text of [
      "Agent passport",
      "Support Agent",
      record.identity_id,
      "Resolver Test Ltd",
      "Parent Holdings",
      "Active.",
      'datetime="2026-10-21T08:30:00.000Z"',
      "Agent manifest",
      "https://agents.example.com/support/manifest.json",
      "npm:@example/support-agent",
      "organisation.domain_control",
      "fresh until",
      "expired",
      `href="/api/p/${record.identity_id}.json"`,
      record.digest,
    ]) {
      expect(html, text).toContain(text);
    }
  });

  it.each(["suspended", "revoked", "retired"] as const)("shows a %s passport with its state", async (lifecycle) => {
    const record = await publish(aggregate({ passport: { lifecycle } }));
    const response = await page(`/p/${record.identity_id}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(`state-${lifecycle}`);
    expect(html.toLowerCase()).toContain(lifecycle);
  });

  it("shows each binding's proof state: verified with method and freshness, lapsed with its reason, claimed, and expired proof as lapsed", async () => {
    const at = "2026-10-20T09:00:00.000Z";
    const binding = (value: string) => ({ class: "endpoint", value, label: null, boundAt: at });
    const record = await publish(
      aggregate({
        bindings: [
          {
            ...binding("https://verified.example.com"),
            verificationState: "verified",
            verificationMethod: "http_well_known",
            verifiedAt: at,
            verificationFreshUntil: "2099-01-01T00:00:00.000Z",
            verificationEvidenceId: "ev_check",
          },
          {
            ...binding("https://lapsed.example.com"),
            verificationState: "lapsed",
            verificationMethod: "dns_txt",
            lapsedAt: at,
            lapseReason: "TXT record no longer names the identity id",
          },
          {
            ...binding("https://stale.example.com"),
            verificationState: "verified",
            verificationMethod: "http_well_known",
            verifiedAt: "2020-01-01T00:00:00.000Z",
            verificationFreshUntil: "2020-01-08T00:00:00.000Z",
            verificationEvidenceId: "ev_check",
          },
          binding("https://claimed.example.com"),
        ],
      }),
    );
    expect(record.bindings.map((b) => b.verification.state)).toEqual(["verified", "lapsed", "verified", "claimed"]);
    const html = await (await page(`/p/${record.identity_id}`)).text();
    const row = (value: string) => html.slice(html.indexOf(value), html.indexOf("</tr>", html.indexOf(value)));
    expect(row("https://verified.example.com")).toContain("verified: well-known document on the bound origin");
    expect(row("https://lapsed.example.com")).toContain("lapsed: TXT record no longer names the identity id");
    expect(row("https://stale.example.com")).toContain("lapsed: proof expired");
    expect(row("https://claimed.example.com")).toContain("claimed: control not proven");
  });

  it("escapes record text and links only web addresses", async () => {
    const record = await publish(
      aggregate({
        passport: { displayName: '<img src=x onerror="alert(1)">' },
        bindings: [
          { class: "endpoint", value: "javascript:alert(1)", label: null, boundAt: "2026-10-20T09:00:00.000Z" },
        ],
      }),
    );
    const html = await (await page(`/p/${record.identity_id}`)).text();
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img");
    expect(html).not.toContain('href="javascript:');
  });

  it("answers the same error classes as the JSON route, as HTML", async () => {
    const malformed = await page("/p/psp_123");
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await malformed.text()).toContain(`${PROBLEM_TYPE_BASE}malformed-identity-id`);
    const unknown = await page(`/p/${mintIdentityId()}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain(`${PROBLEM_TYPE_BASE}identity-not-found`);
  });

  it("offers a lookup form whose answer redirects to the passport's page", async () => {
    const home = await page("/");
    expect(home.status).toBe(200);
    expect(await home.text()).toContain('<form method="get" action="/p"');
    const id = mintIdentityId();
    const redirect = await exports.default.fetch(`${BASE}/p?id=%20${id}%20`, { redirect: "manual" });
    expect(redirect.status).toBe(303);
    expect(redirect.headers.get("location")).toBe(`/p/${id}`);
  });
});
