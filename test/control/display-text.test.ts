// Tenant text that would change how it is shown (controls, bidirectional overrides, invisible
// characters) is refused on write, so no page or terminal can be made to show something else; member
// subjects and development roles are validated as well (issue #25).
import { describe, expect, it } from "vitest";
import { Caller, organisationState } from "../support/api.ts";
import { uniqueHost } from "../support/hosts.ts";
import { developmentToken, freshOrganisation } from "../support/tokens.ts";

const FORGED_OK = "Acme\u001b[2K\r\u001b[32mOK  ok  psp_x";

describe("tenant text that changes how it is shown", () => {
  const cases: [string, (c: Caller, passport: string) => Promise<Response>, string][] = [
    [
      "a display name with ESC and CR",
      (c) => c.request("POST", "/v1/passports", { family: "api", display_name: FORGED_OK }),
      "display_name",
    ],
    [
      "a binding value with a right-to-left override",
      (c, id) =>
        c.request("POST", `/v1/passports/${id}/bindings`, {
          class: "service",
          value: "billing\u202Egnp.exe",
        }),
      "value",
    ],
    [
      "a binding label with a zero-width space",
      (c, id) =>
        c.request("POST", `/v1/passports/${id}/bindings`, {
          class: "endpoint",
          value: `https://${uniqueHost()}/v1`,
          label: "prod\u200Buction",
        }),
      "label",
    ],
    [
      "an evidence source with a carriage return",
      (c, id) =>
        c.request("POST", `/v1/passports/${id}/evidence`, {
          claim: "organisation.identity",
          source: "registry\r\u001b[32mtrusted",
          scope: "organisation",
          observed_at: new Date().toISOString(),
        }),
      "source",
    ],
    [
      "an evidence scope with an isolate",
      (c, id) =>
        c.request("POST", `/v1/passports/${id}/evidence`, {
          claim: "organisation.identity",
          source: "registry",
          scope: "organisation\u2067",
          observed_at: new Date().toISOString(),
        }),
      "scope",
    ],
    [
      "an organisation name with a tag character",
      (c) => c.request("PATCH", `/v1/organisations/${c.organisation}`, { name: "Acme\u{E0041}" }),
      "name",
    ],
    [
      "a state change reason with a line break",
      (c, id) => c.request("PATCH", `/v1/passports/${id}/state`, { availability: "degraded", reason: "a\nOK" }),
      "reason",
    ],
  ];

  for (const [name, send, path] of cases) {
    it(`refuses ${name} (400) and stores nothing`, async () => {
      const owner = await Caller.create("owner");
      const passport = await owner.createPassport({
        bindings: [{ class: "endpoint", value: `https://${uniqueHost()}/v1` }],
      });
      const before = await organisationState(owner.organisation);
      const response = await send(owner, passport.identity_id);
      expect(response.status).toBe(400);
      const body = await response.json<{ type: string; errors: { path: string; message: string }[] }>();
      expect(body.type).toBe("urn:svc:passport:problem:invalid-request");
      expect(body.errors.some((e) => e.path.endsWith(path) && e.message.includes("changes how text is shown"))).toBe(
        true,
      );
      expect(await organisationState(owner.organisation)).toBe(before);
    });
  }

  it("keeps letters of every script, emoji with joiners, and plain punctuation", async () => {
    const owner = await Caller.create("owner");
    const name = "Zahlungs-API · مدفوعات · 決済 👩‍💻 (v2)";
    const passport = await owner.createPassport({ display_name: name });
    expect(passport.display_name).toBe(name);
  });
});

describe("evidence source names the service reserves", () => {
  it.each([
    ["its own name", "passport-service"],
    ["its name in other case and spacing", "Passport Service"],
    ["its name in fullwidth letters, followed by more", "\uff50assport_service audit"],
  ])("refuses evidence under %s (400) and stores nothing", async (_name, source) => {
    const owner = await Caller.create("owner");
    const passport = await owner.createPassport({
      bindings: [{ class: "endpoint", value: `https://${uniqueHost()}/v1` }],
    });
    const before = await organisationState(owner.organisation);
    const response = await owner.request("POST", `/v1/passports/${passport.identity_id}/evidence`, {
      claim: "agent.endpoint_control",
      source,
      scope: "https://api.example",
      observed_at: new Date().toISOString(),
    });
    expect(response.status).toBe(400);
    const body = await response.json<{ errors: { path: string; message: string }[] }>();
    expect(body.errors.some((e) => e.path.endsWith("source") && e.message.includes("reserved"))).toBe(true);
    expect(await organisationState(owner.organisation)).toBe(before);
  });

  it("accepts a source that merely mentions a passport", async () => {
    const owner = await Caller.create("owner");
    const passport = await owner.createPassport({});
    const response = await owner.request("POST", `/v1/passports/${passport.identity_id}/evidence`, {
      claim: "organisation.identity",
      source: "Acme passport office",
      scope: "organisation",
      observed_at: new Date().toISOString(),
    });
    expect(response.status).toBe(200);
  });
});

describe("member subjects", () => {
  it.each([
    ["NUL", "bob%00"],
    ["a zero-width space", "bob%E2%80%8B"],
    ["a right-to-left override", "bob%E2%80%AEeve"],
    ["300 characters", "b".repeat(300)],
    ["surrounding white space", "%20bob"],
  ])("refuses a subject with %s (400) and stores no member", async (_name, encoded) => {
    const owner = await Caller.create("owner");
    const before = await organisationState(owner.organisation);
    const response = await owner.request("PUT", `/v1/organisations/${owner.organisation}/members/${encoded}`, {
      role: "viewer",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      type: "urn:svc:passport:problem:invalid-request",
      errors: [{ path: "subject" }],
    });
    expect(await organisationState(owner.organisation)).toBe(before);
  });

  it("adds a service token by its service-token: subject", async () => {
    const owner = await Caller.create("owner");
    const response = await owner.request(
      "PUT",
      `/v1/organisations/${owner.organisation}/members/service-token:ci-pipeline.access`,
      { role: "viewer" },
    );
    expect(response.status).toBe(201);
  });
});

describe("development token roles", () => {
  it.each(["__proto__", "constructor", "toString", "hasOwnProperty"])(
    "grant no membership for the role %s",
    async (role) => {
      const organisation = freshOrganisation();
      const token = await developmentToken({ organisation, role: role as "owner" });
      const caller = new Caller(token, `user-${crypto.randomUUID()}`, organisation);
      const response = await caller.request("GET", "/v1/me");
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ memberships: [] });
    },
  );
});
