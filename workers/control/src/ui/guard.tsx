import { type ProblemKind, problem } from "@passport/domain";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
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
const originCheck = csrf();

function refusedForm(c: Context<UiEnv>, kind: ProblemKind, detail: string) {
  pageHeaders(c);
  const body = problem(kind, { detail });
  return c.html(
    <Layout title="Form not accepted">
      <h1>The form could not be accepted</h1>
      <ProblemMessage problem={body} />
    </Layout>,
    body.status as 400 | 403 | 413 | 415,
  );
}

/** Every Dashboard form is a handful of short fields; the limit counts while the body streams in. */
const MAX_FORM_BYTES = 64 * 1024;
const limitFormBody = bodyLimit({
  maxSize: MAX_FORM_BYTES,
  onError: (c) => refusedForm(c, "payload-too-large", `Dashboard forms are limited to ${MAX_FORM_BYTES} bytes.`),
});

/**
 * Every Dashboard post is an HTML form from one of our own pages. Hono's CSRF middleware checks
 * where it came from (Origin or Sec-Fetch-Site); a post from another site is refused here, before
 * any handler or the API runs. Each form's synchronizer token is checked afterwards, per session
 * (session.ts). A body of another type, or one that does not parse as the form it claims to be,
 * is answered here (415 or 400) instead of failing inside a handler; Hono caches the parsed form,
 * so handlers read it again at no cost.
 */
export const formPosts: MiddlewareHandler<UiEnv> = async (c, next) => {
  if (c.req.method !== "POST") return next();
  try {
    await originCheck(c, async () => {});
  } catch (error) {
    if (!(error instanceof HTTPException) || error.status !== 403) throw error;
    return refusedForm(
      c,
      "forbidden",
      "This form was posted from another site, so it was refused. Reload the page and try again.",
    );
  }
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (!FORM_TYPES.includes(type)) {
    return refusedForm(c, "unsupported-media-type", "Dashboard forms are sent as HTML form posts.");
  }
  const tooLarge = await limitFormBody(c, async () => {});
  if (tooLarge) return tooLarge;
  try {
    await c.req.formData();
  } catch {
    return refusedForm(c, "invalid-request", "The form's body is malformed.");
  }
  return next();
};
