import { env, exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import { type Body, Caller, uniqueEndpoint } from "../support/api.ts";
import { receiver, uniqueHost } from "../support/hosts.ts";

type Response = { headers?: Record<string, Body>; content?: Record<string, { schema: Body }> };
type Document = {
  paths: Record<string, Record<string, { operationId?: string; responses: Record<string, Response> }>>;
  components: { schemas: Record<string, Body> };
};

async function openApi(): Promise<Document> {
  return (await exports.default.fetch("http://control.test/openapi.json")).json<Document>();
}

/** `get /v1/passports/{id}` for each route the app serves under /v1 (and the public answers under /public). */
function servedOperations(): string[] {
  return app.routes
    .filter((route) => (route.path.startsWith("/v1/") || route.path.startsWith("/public/")) && route.method !== "ALL")
    .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, "{$1}").replace(/\/$/, "")}`);
}

/** The success statuses, response schema and headers (by status) the document declares for an operation. */
function declaredSuccess(
  document: Document,
  method: string,
  path: string,
): { statuses: number[]; schema?: Body; headers: Record<string, string[]> } {
  const responses = document.paths[path]?.[method]?.responses ?? {};
  const statuses = Object.keys(responses).filter((code) => code.startsWith("2"));
  const [first] = statuses;
  if (!first) throw new Error(`${method} ${path} declares no success response`);
  const ref = responses[first]?.content?.["application/json"]?.schema.$ref as string | undefined;
  return {
    statuses: statuses.map(Number),
    schema: ref ? document.components.schemas[ref.split("/").at(-1) ?? ""] : undefined,
    headers: Object.fromEntries(statuses.map((code) => [code, Object.keys(responses[code]?.headers ?? {})])),
  };
}

describe("OpenAPI document", () => {
  it("is served without a token and describes every /v1 route the app serves", async () => {
    const response = await exports.default.fetch("http://control.test/openapi.json");
    expect(response.status).toBe(200);
    const document = await response.json<{ openapi: string; paths: Record<string, Record<string, unknown>> }>();
    expect(document.openapi).toBe("3.1.0");
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`)),
    );
    const served = servedOperations();
    expect(served.length).toBeGreaterThan(15);
    for (const route of served) expect(documented, route).toContain(route);
    for (const operation of documented) expect(served, operation).toContain(operation);
  });

  it("names the configured server URL, whatever host the request was sent to", async () => {
    for (const url of ["http://control.test/openapi.json", "https://attacker.example/openapi.json"]) {
      const document = await (await exports.default.fetch(url)).json<{ servers: { url: string }[] }>();
      expect(document.servers).toEqual([{ url: env.CONTROL_BASE_URL }]);
    }
  });

  it("answers every operation with the status and response shape the document declares", async () => {
    const document = await openApi();
    const owner = await Caller.create("owner");
    const exercised = new Set<string>();
    const exercisedHeaders = new Set<string>();
    /** Calls `method path` and checks the answer against the operation's declared status and schema. */
    async function call(method: string, template: string, path: string, body?: unknown): Promise<Body> {
      const response = await owner.request(method.toUpperCase(), path, body);
      const text = await response.text();
      const declared = declaredSuccess(document, method, template);
      expect(declared.statuses, `${method} ${path}: ${response.status} ${text}`).toContain(response.status);
      // Every header the document promises is sent: If-Match depends on the ETag, clients on Location.
      for (const header of declared.headers[String(response.status)] ?? []) {
        expect(response.headers.get(header), `${header} of ${method} ${template}`).toBeTruthy();
      }
      if (response.headers.get("etag")) exercisedHeaders.add(`${method} ${template} ETag`);
      if (response.headers.get("location")) exercisedHeaders.add(`${method} ${template} Location`);
      const parsed = text ? JSON.parse(text) : undefined;
      if (declared.schema) {
        const result = new Validator(declared.schema, "2020-12", false).validate(parsed);
        expect(result.errors, `${method} ${template}`).toEqual([]);
      }
      exercised.add(`${method} ${template}`);
      return parsed;
    }
    const P = "/v1/passports/{id}";
    await call("get", "/v1/me", "/v1/me");
    const organisation = await call("post", "/v1/organisations", "/v1/organisations", { name: "Shapes" });
    const org = `/v1/organisations/${organisation.id}`;
    await call("get", "/v1/organisations", "/v1/organisations");
    await call("get", "/v1/organisations/{id}", org);
    await call("get", "/v1/organisations/{id}/subscriptions", `${org}/subscriptions`);
    await call("patch", "/v1/organisations/{id}", org, { name: "Renamed in the contract test" });
    await call("put", "/v1/organisations/{id}/members/{subject}", `${org}/members/someone`, { role: "viewer" });
    await call("delete", "/v1/organisations/{id}/members/{subject}", `${org}/members/someone`);

    const create = { family: "api", organisation_id: owner.organisation, display_name: "Contract" };
    const passport = await call("post", "/v1/passports", "/v1/passports", {
      ...create,
      bindings: [{ class: "endpoint", value: uniqueEndpoint() }],
    });
    const id = `/v1/passports/${passport.identity_id}`;
    await call("post", "/v1/passports/batch", "/v1/passports/batch", {
      items: [{ create }, { update: { identity_id: passport.identity_id, display_name: "Batched" } }],
    });
    await call("get", "/v1/passports", `/v1/passports?organisation_id=${owner.organisation}`);
    await call("get", P, id);
    await call("patch", P, id, { display_name: "Shape" });
    const bound = await call("post", `${P}/bindings`, `${id}/bindings`, { class: "openapi", value: uniqueEndpoint() });
    const binding = bound.bindings.find((b: Body) => b.class === "openapi");
    await call("post", `${P}/bindings/{bindingId}/verify`, `${id}/bindings/${binding.id}/verify`);
    await call("patch", `${P}/bindings/{bindingId}`, `${id}/bindings/${binding.id}`, { environment: "staging" });
    await call("delete", `${P}/bindings/{bindingId}`, `${id}/bindings/${binding.id}`);
    const withEvidence = await call("post", `${P}/evidence`, `${id}/evidence`, {
      claim: "operator",
      source: "audit",
      scope: "all",
      observed_at: new Date().toISOString(),
    });
    await call("delete", `${P}/evidence/{evidenceId}`, `${id}/evidence/${withEvidence.evidence[0].id}`);
    await call("patch", `${P}/state`, `${id}/state`, { availability: "degraded", environment: "production" });
    // Reactivated, so the re-check answers carry what is pending (its evidence, added above).
    await owner.json("PATCH", `/v1/passports/${passport.identity_id}/state`, { lifecycle: "suspended" });
    await owner.json("PATCH", `/v1/passports/${passport.identity_id}/state`, { lifecycle: "active" });
    await call("get", `${P}/recheck`, `${id}/recheck`);
    await call("post", `${P}/recheck`, `${id}/recheck`);
    const withAuthority = await call("post", `${P}/authority`, `${id}/authority`, { action: "deploy", context: "ci" });
    await call(
      "post",
      `${P}/authority/{authorityId}/expire`,
      `${id}/authority/${withAuthority.authority[0].id}/expire`,
      {},
    );
    await call("delete", `${P}/authority/{authorityId}`, `${id}/authority/${withAuthority.authority[0].id}`);
    await call("post", `${P}/authority`, `${id}/authority`, {
      action: "payments.*",
      scope: { resource: "org:acme/*", limits: { amount: { value: "100.00", currency: "EUR" } } },
      granted_by: { kind: "organisation", id: owner.organisation, relationship: "responsible" },
      expires_at: "2099-01-01T00:00:00Z",
    });
    await call("get", `${P}/history`, `${id}/history`);
    const agent = await owner.createPassport({ family: "agent", display_name: "Caller" });
    const agentPath = `/v1/passports/${agent.identity_id}`;
    await call("post", `${P}/uses`, `${agentPath}/uses`, { identity_id: passport.identity_id });
    await call("get", `${P}/declared-by`, `${id}/declared-by`);
    const publicCount = `/public/passports/${passport.identity_id}/declared-by`;
    await call("get", "/public/passports/{id}/declared-by", publicCount);
    await call("delete", `${P}/uses/{targetId}`, `${agentPath}/uses/${passport.identity_id}`);
    const survivor = await owner.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
    const moved = await owner.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
    await call("post", `${P}/transfer`, `/v1/passports/${moved.identity_id}/transfer`, {
      organisation_id: organisation.id,
      reason: "reorganised",
    });
    await call("post", `${P}/duplicate-of`, `${id}/duplicate-of`, {
      survivor_id: survivor.identity_id,
      reason: "same object",
    });
    // Change notifications (docs/events.md), to an endpoint on the hosts simulator that echoes the challenge.
    const hooks = uniqueHost("contract-hooks");
    await receiver(hooks, { path: "/events" });
    const N = "/v1/notifications/subscriptions";
    const subscription = await call("post", N, N, {
      endpoint_url: `https://${hooks}/events`,
      passport_id: passport.identity_id,
      events: ["lifecycle", "version"],
    });
    await call("get", N, N);
    await call("get", `${N}/{id}`, `${N}/${subscription.id}`);
    await call("get", `${N}/{id}/deliveries`, `${N}/${subscription.id}/deliveries`);
    await call("delete", `${N}/{id}`, `${N}/${subscription.id}`);

    const withShapes = Object.entries(document.paths)
      .filter(([path]) => !path.startsWith("/v1/acquisitions"))
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method} ${path}`));
    for (const operation of withShapes) expect(exercised, operation).toContain(operation);
    // And every header sent is declared: nothing a client relies on is left out of the document.
    for (const sent of exercisedHeaders) {
      const [method = "", path = "", header = ""] = sent.split(" ");
      const { headers } = declaredSuccess(document, method, path);
      expect(Object.values(headers).flat(), sent).toContain(header);
    }
    expect(exercisedHeaders).toContain("post /v1/passports Location");
    expect(exercisedHeaders).toContain("patch /v1/passports/{id}/state ETag");
  });

  it("names every operation with a unique operationId and states its licence", async () => {
    const document = await openApi();
    const ids = Object.values(document.paths).flatMap((methods) =>
      Object.values(methods).map((operation) => operation.operationId),
    );
    expect(ids.length).toBeGreaterThan(15);
    for (const id of ids) expect(id).toMatch(/^(get|post|put|patch|delete)[A-Z][A-Za-z]*$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths["/v1/passports/{id}/duplicate-of"]?.post?.operationId).toBe("postPassportsByIdDuplicateOf");
    const { info } = (await openApi()) as unknown as { info: { license?: { name: string; identifier?: string } } };
    expect(info.license).toMatchObject({ name: expect.any(String), identifier: "LicenseRef-Proprietary" });
  });

  it("declares the failures any operation can meet: 429 with Retry-After, 507 on writes, 500", async () => {
    const document = await openApi();
    const create = document.paths["/v1/passports"]?.post?.responses ?? {};
    expect(Object.keys(create)).toEqual(expect.arrayContaining(["429", "500", "507"]));
    expect(Object.keys(create["429"]?.headers ?? {})).toEqual(["Retry-After"]);
    expect(create["507"]?.content?.["application/problem+json"]).toBeDefined();
    // A member's read is not rate limited and changes nothing, so it can meet neither 429 nor 507.
    const read = document.paths["/v1/passports/{id}"]?.get?.responses ?? {};
    expect(Object.keys(read)).toContain("500");
    expect(Object.keys(read)).not.toContain("429");
    expect(Object.keys(read)).not.toContain("507");
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        expect(operation.responses["500"], `${method} ${path}`).toBeDefined();
        if (method !== "get") expect(operation.responses["429"], `${method} ${path}`).toBeDefined();
      }
    }
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
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await response.text();
    expect(html).toContain("/v1/passports/{id}/state");
    expect(html).toContain("Minimum role: admin");
  });
});
