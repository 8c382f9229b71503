import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { openApiDocument } from "../api/openapi.ts";
import { declaredOperations, schemaName } from "../api/operations.ts";
import type { AppEnv } from "../context.ts";

export const reference = new Hono<AppEnv>();

/** The server URL the document names: this control plane's configured public origin, never the request's Host. */
const serverUrl = (env: Env) => env.CONTROL_BASE_URL.replace(/\/+$/, "");

reference.get("/openapi.json", (c) => c.json(openApiDocument(serverUrl(c.env))));

type JsonSchema = {
  properties?: Record<string, { type?: unknown; description?: string; enum?: unknown[] }>;
  required?: string[];
};

function Fields({ schema }: { schema: JsonSchema | undefined }) {
  const properties = Object.entries(schema?.properties ?? {});
  if (properties.length === 0) return null;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">field</th>
          <th scope="col">type</th>
          <th scope="col">required</th>
          <th scope="col">notes</th>
        </tr>
      </thead>
      <tbody>
        {properties.map(([name, property]) => (
          <tr>
            <td>
              <code>{name}</code>
            </td>
            <td>{property.enum ? property.enum.join(" | ") : String(property.type ?? "object")}</td>
            <td>{schema?.required?.includes(name) ? "yes" : "no"}</td>
            <td>{property.description ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A browsable reference of the Dashboard API, rendered from the same OpenAPI document. */
reference.get(
  "/docs",
  secureHeaders({ contentSecurityPolicy: { defaultSrc: ["'none'"], styleSrc: ["'unsafe-inline'"] } }),
  (c) => {
    const document = openApiDocument(serverUrl(c.env));
    const schemas = document.components.schemas as Record<string, JsonSchema>;
    return c.html(
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>Dashboard API reference</title>
          <style>{`body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
code{background:#f2f2f2;padding:0 .2em}section{border-top:1px solid #ccc;padding:.5rem 0}
.m{font-weight:700;text-transform:uppercase;margin-right:.5rem}table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top}`}</style>
        </head>
        <body>
          <h1>Dashboard API reference</h1>
          <p>
            Every request carries a JWT (<code>Authorization: Bearer</code> or <code>Cf-Access-Jwt-Assertion</code>).
            Errors are RFC 9457 problem details. Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI
            3.1).
          </p>
          {declaredOperations().map((operation) => (
            <section>
              <h2>
                <span class="m">{operation.method}</span>
                <code>{operation.path}</code>
              </h2>
              <p>
                {operation.summary}. Minimum role: {operation.role}.
                {operation.ifMatch ? " Accepts If-Match; a stale one gets 412." : ""}
              </p>
              {operation.body ? (
                <>
                  <h3>Body: {schemaName(operation.body)}</h3>
                  <Fields schema={schemas[schemaName(operation.body)]} />
                </>
              ) : null}
            </section>
          ))}
        </body>
      </html>,
    );
  },
);
