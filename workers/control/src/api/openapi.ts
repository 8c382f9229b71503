import { z } from "zod";
import { AfterRecovery } from "./after-recovery.ts";
import { type DeclaredOperation, declaredOperations, schemaName } from "./operations.ts";
import { MemberRole } from "./requests.ts";

const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string().optional(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .loose()
  .describe("RFC 9457 problem details; see docs/problems.md for every type.");

export const Me = z.object({
  subject: z.string(),
  memberships: z.array(z.object({ organisation_id: z.string(), role: MemberRole })),
});
export const OrganisationList = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      parent_id: z.string().nullable(),
      role: MemberRole,
      created_at: z.string(),
    }),
  ),
});
export const Organisation = z.object({
  id: z.string(),
  name: z.string(),
  parent: z.object({ id: z.string(), name: z.string() }).nullable(),
  role: MemberRole,
  after_recovery: AfterRecovery,
  members: z.array(z.object({ subject: z.string(), role: MemberRole, since: z.string() })),
  children: z.array(z.object({ id: z.string(), name: z.string() })),
  history: z.array(
    z.object({ kind: z.string(), actor: z.string(), at: z.string(), detail: z.record(z.string(), z.unknown()) }),
  ),
  /** Marketplace subscriptions held through this organisation, with their last reported status. */
  subscriptions: z.array(
    z.object({
      product_code: z.string().nullable(),
      license_arn: z.string().nullable(),
      aws_account_id: z.string().nullable(),
      status: z.string(),
      status_at: z.string(),
      last_event: z.string().nullable(),
      since: z.string(),
    }),
  ),
});

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const problemResponse = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ref("Problem") } },
});

/**
 * The answers any operation can meet whatever its input (api/rate-limit.ts, api/problem.ts): a
 * write or a public read over its per-caller limit (429 with `Retry-After`), a write the full
 * database refused (507: nothing was changed, reads still work), and a fault of ours (500).
 */
function failureResponses(operation: DeclaredOperation) {
  const write = operation.method !== "get";
  const limited = write || operation.role === "public";
  return {
    ...(limited
      ? {
          "429": {
            ...problemResponse("Over the caller's rate limit; nothing was done"),
            headers: {
              "Retry-After": {
                description: "Seconds to wait before trying again.",
                required: true,
                schema: { type: "integer", minimum: 1 },
              },
            },
          },
        }
      : {}),
    ...(write
      ? { "507": problemResponse("The service's database is full; nothing was changed, reads still work") }
      : {}),
    "500": problemResponse("A fault of the service; retry, or contact support with the time of the request"),
  };
}

function parameters(operation: DeclaredOperation) {
  const fromPath = [...operation.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  const fromQuery = operation.query
    ? Object.entries(operation.query.shape).map(([name, schema]) => ({
        name,
        in: "query",
        required: false,
        schema: z.toJSONSchema(schema as z.ZodType, { io: "input", unrepresentable: "any" }),
      }))
    : [];
  const ifMatch = operation.ifMatch
    ? [
        {
          name: "If-Match",
          in: "header",
          required: false,
          schema: { type: "string" },
          description: "ETag from a read; a stale one gets 412",
        },
      ]
    : [];
  return [...fromPath, ...fromQuery, ...ifMatch];
}

const pascal = (word: string) =>
  word
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");

/**
 * A stable `operationId` from the method and path, unique because they are: each literal segment
 * after `/v1` in PascalCase, each parameter as `By{Name}`.
 * @example
 * operationId({ method: "post", path: "/v1/passports/{id}/duplicate-of" }); // "postPassportsByIdDuplicateOf"
 */
function operationId(operation: Pick<DeclaredOperation, "method" | "path">): string {
  const segments = operation.path
    .split("/")
    .filter((segment) => segment !== "" && segment !== "v1")
    .map((segment) => {
      const parameter = /^\{(\w+)\}$/.exec(segment)?.[1];
      return parameter ? `By${pascal(parameter)}` : pascal(segment);
    });
  return `${operation.method}${segments.join("")}`;
}

/**
 * The headers a success answer carries. Every answer with a passport view carries its `ETag`, the
 * value `If-Match` expects back (docs/dashboard.md); a create answers 201 with the new resource's
 * `Location`.
 */
function successHeaders(operation: DeclaredOperation, status: number, response: string | undefined) {
  const headers: Record<string, unknown> = {};
  if (response === "PassportView") {
    headers.ETag = {
      description:
        'The passport\'s record version as a strong entity tag, `"v{record_version}"`; send it back as `If-Match`.',
      required: true,
      schema: { type: "string", pattern: '^"v[0-9]+"$' },
    };
  }
  if (status === 201 && operation.method === "post") {
    headers.Location = {
      description: "The path of the created resource.",
      required: true,
      schema: { type: "string", format: "uri-reference" },
    };
  }
  return Object.keys(headers).length > 0 ? { headers } : {};
}

function jsonSchema(named: Record<string, z.ZodType>, io: "input" | "output") {
  const [schema] = Object.values(named);
  return z.toJSONSchema(schema ?? z.unknown(), { io, unrepresentable: "any" });
}

/**
 * The OpenAPI 3.1 document, generated from the operations the routes declare (api/operations.ts):
 * the body, query and response schemas in it are the ones the routes validate and answer with.
 */
export function openApiDocument(serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = { Problem: z.toJSONSchema(Problem, { unrepresentable: "any" }) };
  for (const operation of declaredOperations()) {
    const request = operation.body && schemaName(operation.body);
    const response = operation.response && schemaName(operation.response);
    if (operation.body && request) schemas[request] = jsonSchema(operation.body, "input");
    if (operation.response && response) schemas[response] = jsonSchema(operation.response, "output");
    const status = operation.status ?? 200;
    const success = (code: number) => ({
      description: code === 201 ? "Created" : "OK",
      ...successHeaders(operation, code, response),
      ...(response ? { content: { "application/json": { schema: ref(response) } } } : {}),
    });
    paths[operation.path] ??= {};
    (paths[operation.path] as Record<string, unknown>)[operation.method] = {
      operationId: operationId(operation),
      summary: operation.summary,
      description: operation.role === "public" ? "Public: no token needed." : `Minimum role: ${operation.role}.`,
      parameters: parameters(operation),
      ...(request
        ? { requestBody: { required: true, content: { "application/json": { schema: ref(request) } } } }
        : {}),
      responses: {
        [String(status)]: success(status),
        ...(operation.alsoStatus ? { [String(operation.alsoStatus)]: success(operation.alsoStatus) } : {}),
        "400": problemResponse("Invalid request"),
        ...(operation.role === "public"
          ? {}
          : { "401": problemResponse("Missing or invalid token"), "403": problemResponse("Role too weak") }),
        "404": problemResponse("Not found, or not in your organisations"),
        ...(request ? { "413": problemResponse("Body over 64 KiB"), "415": problemResponse("Not JSON") } : {}),
        ...(operation.ifMatch ? { "409": problemResponse("Conflict"), "412": problemResponse("Stale If-Match") } : {}),
        ...failureResponses(operation),
      },
      security: operation.role === "public" ? [] : [{ bearer: [] }, { cloudflareAccess: [] }],
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Passport Identity Service: Dashboard API",
      version: "2026-10",
      description: "Authenticated control plane. Errors are RFC 9457 problem details.",
      // The service is not open source; the SPDX form of "no licence is granted" (as in packages/verifier).
      license: { name: "Proprietary: all rights reserved", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        cloudflareAccess: { type: "apiKey", in: "header", name: "Cf-Access-Jwt-Assertion" },
      },
    },
  };
}
