import { z } from "zod";
import { ClaimRequest } from "../routes/acquisitions.ts";
import {
  AuthorityInput,
  BindingInput,
  CreateOrganisationRequest,
  CreatePassportRequest,
  EvidenceInput,
  ListPassportsQuery,
  MarkDuplicateRequest,
  PutMemberRequest,
  StateChangeRequest,
  TransferRequest,
  UpdatePassportRequest,
} from "./requests.ts";
import { HistoryPage, PassportPage, PassportView } from "./views.ts";

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

const Me = z.object({
  subject: z.string(),
  memberships: z.array(z.object({ organisation_id: z.string(), role: PutMemberRequest.shape.role })),
});
const OrganisationSummary = z.object({
  id: z.string(),
  name: z.string(),
  parent_id: z.string().nullable(),
  role: PutMemberRequest.shape.role,
});
const Organisation = z.object({
  id: z.string(),
  name: z.string(),
  parent: z.object({ id: z.string(), name: z.string() }).nullable(),
  role: PutMemberRequest.shape.role,
  members: z.array(z.object({ subject: z.string(), role: PutMemberRequest.shape.role, since: z.string() })),
});

const SCHEMAS = {
  Problem,
  Me,
  OrganisationSummary,
  Organisation,
  PassportView,
  PassportPage,
  HistoryPage,
  CreatePassportRequest,
  UpdatePassportRequest,
  BindingInput,
  EvidenceInput,
  StateChangeRequest,
  AuthorityInput,
  MarkDuplicateRequest,
  TransferRequest,
  CreateOrganisationRequest,
  PutMemberRequest,
  ClaimRequest,
} as const;
type SchemaName = keyof typeof SCHEMAS;

export interface Operation {
  method: "get" | "post" | "put" | "patch" | "delete";
  path: string;
  summary: string;
  role: "viewer" | "editor" | "admin" | "owner" | "any member";
  request?: SchemaName;
  response?: SchemaName;
  status?: number;
  query?: z.ZodObject;
  ifMatch?: boolean;
}

const passport = "/v1/passports/{id}";

/** Every Dashboard API operation; the OpenAPI document and the reference page are built from this list. */
export const OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/v1/me",
    summary: "Who the token belongs to and their memberships",
    role: "any member",
    response: "Me",
  },
  { method: "get", path: "/v1/organisations", summary: "Your organisations", role: "any member" },
  {
    method: "post",
    path: "/v1/organisations",
    summary: "Create an organisation (you become its owner; admin of the parent to attach one)",
    role: "any member",
    request: "CreateOrganisationRequest",
    status: 201,
  },
  {
    method: "get",
    path: "/v1/organisations/{id}",
    summary: "An organisation with its parent and members",
    role: "viewer",
    response: "Organisation",
  },
  {
    method: "put",
    path: "/v1/organisations/{id}/members/{subject}",
    summary: "Add a member or change a role; also account recovery (add the new subject)",
    role: "admin",
    request: "PutMemberRequest",
  },
  {
    method: "delete",
    path: "/v1/organisations/{id}/members/{subject}",
    summary: "Remove a member",
    role: "admin",
    status: 204,
  },
  {
    method: "get",
    path: "/v1/passports",
    summary: "List passports in your organisations (stable order, cursor pagination)",
    role: "viewer",
    query: ListPassportsQuery,
    response: "PassportPage",
  },
  {
    method: "post",
    path: "/v1/passports",
    summary: "Create a passport (409 when its primary binding already identifies an active passport)",
    role: "editor",
    request: "CreatePassportRequest",
    response: "PassportView",
    status: 201,
  },
  {
    method: "get",
    path: passport,
    summary: "A passport (ETag is its record version)",
    role: "viewer",
    response: "PassportView",
  },
  {
    method: "patch",
    path: passport,
    summary: "Update display data",
    role: "editor",
    request: "UpdatePassportRequest",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "post",
    path: `${passport}/bindings`,
    summary: "Add a binding (validated per class)",
    role: "editor",
    request: "BindingInput",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "delete",
    path: `${passport}/bindings/{bindingId}`,
    summary: "Remove a binding",
    role: "editor",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "post",
    path: `${passport}/evidence`,
    summary: "Add evidence (values that look like credentials are refused)",
    role: "editor",
    request: "EvidenceInput",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "delete",
    path: `${passport}/evidence/{evidenceId}`,
    summary: "Withdraw evidence",
    role: "editor",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "patch",
    path: `${passport}/state`,
    summary: "Change state: environment, version, availability (editor); lifecycle (admin)",
    role: "editor",
    request: "StateChangeRequest",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "post",
    path: `${passport}/authority`,
    summary: "Add an action-specific authority context entry",
    role: "editor",
    request: "AuthorityInput",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "delete",
    path: `${passport}/authority/{authorityId}`,
    summary: "Remove an authority context entry",
    role: "editor",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "post",
    path: `${passport}/duplicate-of`,
    summary: "Mark this passport a duplicate of a surviving one (retires it)",
    role: "admin",
    request: "MarkDuplicateRequest",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "post",
    path: `${passport}/transfer`,
    summary: "Move responsibility to another organisation (owner of both)",
    role: "owner",
    request: "TransferRequest",
    response: "PassportView",
    ifMatch: true,
  },
  {
    method: "get",
    path: `${passport}/history`,
    summary: "Every change, oldest first",
    role: "viewer",
    response: "HistoryPage",
  },
  {
    method: "get",
    path: "/v1/acquisitions/{id}",
    summary: "A marketplace acquisition's progress, stage by stage (before the claim: send X-Claim-Reference)",
    role: "any member",
  },
  {
    method: "post",
    path: "/v1/acquisitions/{id}/claim",
    summary: "Claim a completed marketplace acquisition with its single-use claim reference (docs/acquisition.md)",
    role: "any member",
    request: "ClaimRequest",
  },
];

const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });
const problemResponse = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ref("Problem") } },
});

function parameters(operation: Operation) {
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

/** The OpenAPI 3.1 document, generated from the zod schemas the routes validate with. */
export function openApiDocument(serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of OPERATIONS) {
    const status = String(operation.status ?? 200);
    paths[operation.path] ??= {};
    (paths[operation.path] as Record<string, unknown>)[operation.method] = {
      summary: operation.summary,
      description: `Minimum role: ${operation.role}.`,
      parameters: parameters(operation),
      ...(operation.request
        ? { requestBody: { required: true, content: { "application/json": { schema: ref(operation.request) } } } }
        : {}),
      responses: {
        [status]: operation.response
          ? { description: "OK", content: { "application/json": { schema: ref(operation.response) } } }
          : { description: "OK" },
        "400": problemResponse("Invalid request"),
        "401": problemResponse("Missing or invalid token"),
        "403": problemResponse("Role too weak"),
        "404": problemResponse("Not found, or not in your organisations"),
        ...(operation.request
          ? { "413": problemResponse("Body over 64 KiB"), "415": problemResponse("Not JSON") }
          : {}),
        ...(operation.ifMatch ? { "409": problemResponse("Conflict"), "412": problemResponse("Stale If-Match") } : {}),
      },
      security: [{ bearer: [] }, { cloudflareAccess: [] }],
    };
  }
  const schemas = Object.fromEntries(
    Object.entries(SCHEMAS).map(([name, schema]) => [
      name,
      z.toJSONSchema(schema, {
        io: name.endsWith("Request") || name.endsWith("Input") ? "input" : "output",
        unrepresentable: "any",
      }),
    ]),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "Passport Identity Service: Dashboard API",
      version: "2026-10",
      description: "Authenticated control plane. Errors are RFC 9457 problem details.",
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
