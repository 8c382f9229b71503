import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../context.ts";
import { jsonBody, queryParams } from "./validation.ts";

/** A schema with the name it has under components.schemas, written `{ PassportView }`. */
type Named<S extends z.ZodType = z.ZodType> = Record<string, S>;

/** Everything the OpenAPI document says about one route, declared once at the route. */
export interface Operation<B extends z.ZodType | undefined = undefined, Q extends z.ZodObject | undefined = undefined> {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** The full path in OpenAPI form, e.g. `/v1/passports/{id}`; the drift test matches it to the served route. */
  path: string;
  summary: string;
  /** `public`: served without a token (`/public/*`), answering only what records publish anyway. */
  role: "viewer" | "editor" | "admin" | "owner" | "any member" | "public";
  /** The JSON body schema: the route validates with exactly this schema. */
  body?: B extends z.ZodType ? Named<B> : undefined;
  /** The query schema: the route validates with exactly this schema. */
  query?: Q;
  response?: Named;
  status?: number;
  /** A second success status, e.g. 201 when a PUT creates what it would otherwise replace (200). */
  alsoStatus?: number;
  ifMatch?: boolean;
}

export interface DeclaredOperation extends Omit<Operation<z.ZodType | undefined, z.ZodObject | undefined>, "body"> {
  body?: Named;
}

const declared: DeclaredOperation[] = [];

/** Every operation the routes declared, in declaration order; the OpenAPI document is built from it. */
export function declaredOperations(): readonly DeclaredOperation[] {
  return declared;
}

export function schemaName(named: Named): string {
  const [name] = Object.keys(named);
  if (!name) throw new Error("a named schema needs a name");
  return name;
}

function only(named: Named): z.ZodType {
  const [schema] = Object.values(named);
  if (!schema) throw new Error("a named schema needs a schema");
  return schema;
}

type Validated<B, Q> = (B extends z.ZodType ? { in: { json: z.input<B> }; out: { json: z.infer<B> } } : object) &
  (Q extends z.ZodType ? { in: { query: z.input<Q> }; out: { query: z.infer<Q> } } : object);

/**
 * Declares a route's operation and returns the middleware that validates its body and query with
 * the declared schemas, so the document and the validation cannot disagree. Failures are our
 * problem documents (see validation.ts). The declared role is what the route enforces: the
 * middleware sets it as `declaredRole` for the membership checks.
 * @example
 * passports.post("/", operation({ method: "post", path: "/v1/passports", body: { CreatePassportRequest }, ... }), handler);
 */
export function operation<B extends z.ZodType | undefined = undefined, Q extends z.ZodObject | undefined = undefined>(
  declaration: Operation<B, Q>,
): MiddlewareHandler<AppEnv, string, Validated<B, Q>> {
  declared.push(declaration as DeclaredOperation);
  const validators = [
    declaration.query ? queryParams(declaration.query) : undefined,
    declaration.body ? jsonBody(only(declaration.body as Named)) : undefined,
  ].filter((validator) => validator !== undefined) as MiddlewareHandler<AppEnv>[];
  const declaredRole = declaration.role === "any member" || declaration.role === "public" ? "viewer" : declaration.role;
  const validate: MiddlewareHandler<AppEnv> = async (c, next) => {
    c.set("declaredRole", declaredRole);
    for (const validator of validators) await validator(c, async () => {});
    await next();
  };
  return validate as MiddlewareHandler<AppEnv, string, Validated<B, Q>>;
}
