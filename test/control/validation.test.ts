import { describe, expect, it } from "vitest";
import { Caller, organisationState } from "../support/api.ts";

describe("request validation", () => {
  const cases: [string, (c: Caller) => Promise<Response>, number, string][] = [
    ["malformed JSON", (c) => c.raw("POST", "/v1/passports", "{not json", "application/json"), 400, "invalid-request"],
    [
      "an unknown field",
      (c) => c.request("POST", "/v1/passports", { family: "api", colour: "blue" }),
      400,
      "invalid-request",
    ],
    [
      "a wrong type",
      (c) => c.request("POST", "/v1/passports", { family: "api", bindings: "none" }),
      400,
      "invalid-request",
    ],
    ["an unknown family", (c) => c.request("POST", "/v1/passports", { family: "robot" }), 400, "invalid-request"],
    [
      "another media type",
      (c) => c.raw("POST", "/v1/passports", "family=api", "application/x-www-form-urlencoded"),
      415,
      "unsupported-media-type",
    ],
    [
      "an oversize body",
      (c) => c.request("POST", "/v1/passports", { family: "api", display_name: "x".repeat(70_000) }),
      413,
      "payload-too-large",
    ],
  ];

  for (const [name, send, status, type] of cases) {
    it(`answers ${name} with ${status} problem+json and leaves the database unchanged`, async () => {
      const owner = await Caller.create("owner");
      const before = await organisationState(owner.organisation);
      const response = await send(owner);
      expect(response.status).toBe(status);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      const body = await response.json<{ type: string; status: number }>();
      expect(body).toMatchObject({ type: `urn:svc:passport:problem:${type}`, status });
      expect(JSON.stringify(body)).not.toMatch(/at .*\.ts|stack/i);
      expect(await organisationState(owner.organisation)).toBe(before);
    });
  }

  it("refuses an empty create (no name, no binding) with 400 naming display_name, publishing nothing", async () => {
    const owner = await Caller.create("owner");
    const before = await organisationState(owner.organisation);
    for (const body of [
      { family: "api", organisation_id: owner.organisation },
      { family: "agent", organisation_id: owner.organisation, bindings: [] },
    ]) {
      const response = await owner.request("POST", "/v1/passports", body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        type: "urn:svc:passport:problem:invalid-request",
        errors: [{ path: "display_name", message: expect.stringContaining("name the passport or give it a binding") }],
      });
    }
    // A whitespace-only name is no name either.
    const blank = await owner.request("POST", "/v1/passports", { family: "api", display_name: "   " });
    expect(blank.status).toBe(400);
    expect(await organisationState(owner.organisation)).toBe(before);
    const list = await owner.json("GET", `/v1/passports?organisation_id=${owner.organisation}`);
    expect(list.items).toEqual([]);
  });

  it("lists each schema problem with its path", async () => {
    const owner = await Caller.create("owner");
    const response = await owner.request("POST", "/v1/passports", {
      family: "api",
      bindings: [{ class: "endpoint", value: "nope" }],
    });
    expect(await response.json()).toMatchObject({
      errors: [{ path: "bindings.0.value", message: expect.stringContaining("http(s) URL") }],
    });
  });
});
