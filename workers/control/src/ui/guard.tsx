import { problem } from "@passport/domain";
import type { MiddlewareHandler } from "hono";
import { type ApiFetch, dashboardApi } from "./api.ts";
import type { UiEnv } from "./context.ts";
import { Layout, ProblemMessage, pageHeaders } from "./layout.tsx";
import { csrfToken, currentSession, endSession } from "./session.ts";

/** Where to come back to after signing in: a path on this Dashboard, never another site. */
export function safeNext(value: string | undefined | null): string {
  return value && /^\/dashboard(?:[/?]|$)/.test(value) ? value : "/dashboard/passports";
}

export function signInLocation(pathAndQuery: string, reason?: "expired"): string {
  const query = new URLSearchParams({ next: safeNext(pathAndQuery) });
  if (reason) query.set("reason", reason);
  return `/dashboard/sign-in?${query}`;
}

/**
 * Pages behind sign-in: without a session the browser goes to the sign-in page and comes back;
 * with one, the caller's subject is read through `GET /v1/me`, so an expired or untrusted token
 * is found out here, once, by the API's own verification. With `optional`, a visitor without a
 * session passes through with no `viewer` set.
 */
export function signedIn(fetchApi: ApiFetch, options: { optional?: boolean } = {}): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    pageHeaders(c);
    const url = new URL(c.req.url);
    const session = currentSession(c);
    // Optional: the page itself decides what a signed-out visitor sees (onboarding).
    if (!session && options.optional) return next();
    if (!session) return c.redirect(signInLocation(url.pathname + url.search), 303);
    const api = dashboardApi(fetchApi, c.env, url.origin, session.token);
    const me = await api.call<{ subject: string }>("/v1/me");
    if (!me.ok && me.problem.status === 401) {
      if (session.via === "cookie") endSession(c);
      return c.redirect(signInLocation(url.pathname + url.search, "expired"), 303);
    }
    if (!me.ok) {
      return c.html(
        <Layout title="Unavailable">
          <h1>The Dashboard cannot load your account</h1>
          <ProblemMessage problem={me.problem} />
        </Layout>,
        me.problem.status as 500,
      );
    }
    c.set("session", session);
    c.set("api", api);
    c.set("viewer", { subject: me.body.subject, csrf: await csrfToken(session.token) });
    await next();
  };
}

const FORM_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data"];

/**
 * Every Dashboard post is an HTML form. A body of another type, or one that does not parse as the
 * form it claims to be, is answered here (415 or 400, as a page) instead of failing inside a
 * handler; the parsed form is cached by Hono, so handlers read it again at no cost.
 */
export const formPosts: MiddlewareHandler<UiEnv> = async (c, next) => {
  if (c.req.method !== "POST") return next();
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  const refuse = (status: 400 | 415, detail: string) => {
    pageHeaders(c);
    return c.html(
      <Layout title="Form not accepted">
        <h1>The form could not be read</h1>
        <ProblemMessage problem={problem(status === 415 ? "unsupported-media-type" : "invalid-request", { detail })} />
      </Layout>,
      status,
    );
  };
  if (!FORM_TYPES.includes(type)) return refuse(415, "Dashboard forms are sent as HTML form posts.");
  try {
    await c.req.formData();
  } catch {
    return refuse(400, "The form's body is malformed.");
  }
  return next();
};
