import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import type { Body } from "../support/api.ts";

describe("OpenAPI document", () => {
  it("is served without a token and describes every /v1 route the app serves", async () => {
    const response = await exports.default.fetch("http://control.test/openapi.json");
    expect(response.status).toBe(200);
    const document = await response.json<{ openapi: string; paths: Record<string, Record<string, unknown>> }>();
    expect(document.openapi).toBe("3.1.0");
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`)),
    );
    const served = app.routes
      .filter((route) => route.path.startsWith("/v1/") && route.method !== "ALL")
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, "{$1}").replace(/\/$/, "")}`);
    expect(served.length).toBeGreaterThan(15);
    for (const route of served) expect(documented, route).toContain(route);
  });

  it("generates request schemas from the zod definitions", async () => {
    const response = await exports.default.fetch("http://control.test/openapi.json");
    const { components } = await response.json<{ components: { schemas: Body } }>();
    const create = components.schemas.CreatePassportRequest;
    expect(create.required).toEqual(["family"]);
    expect(create.properties.family.enum).toEqual(["api", "agent"]);
    expect(create.additionalProperties).toBe(false);
    expect(components.schemas.BindingInput.properties.class.enum).toContain("mcp_surface");
  });

  it("has a browsable reference page", async () => {
    const response = await exports.default.fetch("http://control.test/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    const html = await response.text();
    expect(html).toContain("/v1/passports/{id}/state");
    expect(html).toContain("Minimum role: admin");
  });
});
