import type { Problem } from "@passport/domain";

/** The control plane's own fetch handler: the UI calls the Dashboard API in-process through it. */
export type ApiFetch = (request: Request, env: Env) => Response | Promise<Response>;

export type ApiResult<T> = { ok: true; status: number; body: T; etag?: string } | { ok: false; problem: Problem };

export interface ApiCall {
  method?: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  body?: unknown;
  ifMatch?: string;
  headers?: Record<string, string>;
}

/**
 * A client of the public Dashboard API bound to one signed-in caller. Every page reads and every
 * form writes through it, so authentication and role checks happen exactly once, in `/v1`.
 * @example
 * const api = dashboardApi(fetchApi, c.env, c.req.url, token);
 * const me = await api.call<{ subject: string }>("/v1/me");
 */
export function dashboardApi(fetchApi: ApiFetch, env: Env, origin: string, token: string) {
  return {
    async call<T>(path: string, options: ApiCall = {}): Promise<ApiResult<T>> {
      const headers = new Headers({ authorization: `Bearer ${token}`, accept: "application/json", ...options.headers });
      if (options.body !== undefined) headers.set("content-type", "application/json");
      if (options.ifMatch) headers.set("if-match", options.ifMatch);
      const request = new Request(new URL(path, origin), {
        method: options.method ?? "GET",
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      const response = await fetchApi(request, env);
      const text = await response.text();
      const json = text ? (JSON.parse(text) as unknown) : undefined;
      if (!response.ok) return { ok: false, problem: asProblem(response.status, json) };
      return { ok: true, status: response.status, body: json as T, etag: response.headers.get("etag") ?? undefined };
    },
  };
}
export type DashboardApi = ReturnType<typeof dashboardApi>;

function asProblem(status: number, json: unknown): Problem {
  if (json && typeof json === "object" && "title" in json) return json as Problem;
  return { type: "about:blank", title: "Unexpected answer from the Dashboard API", status };
}

/** The problem type's slug (`urn:svc:passport:problem:forbidden` → `forbidden`). */
export function problemSlug(problem: Problem): string {
  return problem.type.split(":").at(-1) ?? problem.type;
}
