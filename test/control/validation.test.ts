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
