import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { z } from "zod";
import type { AppEnv } from "../context.ts";
import { Refusal } from "../failures.ts";

const MAX_BODY_BYTES = 64 * 1024;

/** Refuses a body that is not declared as JSON (415). */
function requireJsonMediaType(request: Request): void {
  const mediaType = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") {
    throw new Refusal("unsupported-media-type", { detail: "Send the body as application/json." });
  }
}

// Hono's body limit refuses by Content-Length or, without one, while reading the stream.
const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw tooLarge();
  },
});

/** Parses the (already size-limited) body as UTF-8 JSON and validates it against `schema` (400). */
async function parseJson<S extends z.ZodType>(request: Request, schema: S): Promise<z.infer<S>> {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(await request.arrayBuffer()));
  } catch {
    throw new Refusal("invalid-request", { detail: "The body is not valid UTF-8 JSON." });
  }
  const result = schema.safeParse(json);
  if (!result.success) throw invalid("The body does not match the expected shape.", result.error);
  return result.data;
}

/** A 400 problem listing each schema issue with its path. */
function invalid(detail: string, error: z.ZodError): Refusal {
  return new Refusal("invalid-request", {
    detail,
    errors: error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
  });
}

function tooLarge(): Refusal {
  return new Refusal("payload-too-large", { detail: `Bodies are limited to ${MAX_BODY_BYTES} bytes.` });
}

/**
 * Route middleware that validates the JSON body as `c.req.valid("json")`. Every failure is a
 * problem: 415 for another media type, 413 above MAX_BODY_BYTES, 400 for malformed JSON or a body
 * the schema refuses (with each issue's path).
 * @example
 * app.post("/", jsonBody(CreatePassportRequest), (c) => c.json(c.req.valid("json")));
 */
export function jsonBody<S extends z.ZodType>(
  schema: S,
): MiddlewareHandler<AppEnv, string, { in: { json: z.input<S> }; out: { json: z.infer<S> } }> {
  return async (c, next) => {
    requireJsonMediaType(c.req.raw);
    await limitBody(c, async () => {
      c.req.addValidatedData("json", (await parseJson(c.req.raw, schema)) as object);
    });
    await next();
  };
}

/** Route middleware that validates the query string (each parameter at most once) as `c.req.valid("query")`. */
export function queryParams<S extends z.ZodType>(
  schema: S,
): MiddlewareHandler<AppEnv, string, { in: { query: z.input<S> }; out: { query: z.infer<S> } }> {
  return async (c, next) => {
    // c.req.query() keeps a repeated parameter's first value; `?family=api&family=agent` would then
    // answer for api alone, as if the second were not asked.
    const repeated = Object.entries(c.req.queries())
      .filter(([, values]) => values.length > 1)
      .map(([name]) => ({ path: name, message: "is given more than once; give it once" }));
    if (repeated.length > 0) {
      throw new Refusal("invalid-request", { detail: "The query parameters are not valid.", errors: repeated });
    }
    const result = schema.safeParse(c.req.query());
    if (!result.success) throw invalid("The query parameters are not valid.", result.error);
    c.req.addValidatedData("query", result.data as object);
    await next();
  };
}
