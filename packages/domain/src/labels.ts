import type { BindingClass, Family } from "./record.ts";

// This module stays free of zod: the resolver imports it, and its bundle must not carry the schemas.

/** The binding that names the logical object for duplicate governance. */
export const PRIMARY_BINDING_CLASS: Record<Family, BindingClass> = { api: "endpoint", agent: "manifest" };

/** How the binding classes of spec 2.2 are named for people, on the proof page and the Dashboard. */
export const BINDING_CLASS_LABELS: Record<BindingClass, string> = {
  endpoint: "Endpoint / base URL",
  gateway: "Gateway / provider id",
  openapi: "OpenAPI / description",
  service: "Service / workload",
  environment: "Environment / version",
  repository: "Repository",
  documentation: "Documentation",
  manifest: "Agent manifest",
  mcp_surface: "MCP / API surface",
  package: "Package reference",
  signing_keys: "Signing key directory",
};
