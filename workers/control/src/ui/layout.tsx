import type { Problem } from "@passport/domain";
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import { problemSlug } from "./api.ts";
import { assetHref } from "./assets.ts";

/**
 * Strict policy for every Dashboard page: only this origin's stylesheet and script, forms post
 * only here, never framed. No inline code, so an injected string can never run.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** Security headers for Dashboard pages; pages show customer data, so no cache keeps them. */
// biome-ignore lint/suspicious/noExplicitAny: sets response headers only
export function pageHeaders(c: Context<any>): void {
  c.header("content-security-policy", CONTENT_SECURITY_POLICY);
  c.header("x-content-type-options", "nosniff");
  c.header("referrer-policy", "same-origin");
  c.header("cache-control", "no-store");
}

export interface Viewer {
  subject: string;
  csrf: string;
}

export function Layout(props: {
  title: string;
  viewer?: Viewer;
  children: Child;
  /** Without JavaScript, reload the page every this many seconds (onboarding progress). */
  noscriptRefresh?: number;
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Passport Dashboard`}</title>
        <link rel="stylesheet" href={assetHref("dashboard.css")} />
        <script type="module" src={assetHref("dashboard.js")} />
        {props.noscriptRefresh ? (
          <noscript>
            <meta http-equiv="refresh" content={String(props.noscriptRefresh)} />
          </noscript>
        ) : null}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/dashboard/passports">
            Passport Dashboard
          </a>
          {props.viewer ? (
            <>
              <nav aria-label="Main">
                <a href="/dashboard/passports">Passports</a>
                <a href="/dashboard/passports/new">New passport</a>
                <a href="/dashboard/organisations">Organisations</a>
                <a href="/docs">API reference</a>
              </nav>
              <span class="hint">
                Signed in as <span class="mono">{props.viewer.subject}</span>
              </span>
              <form method="post" action="/dashboard/sign-out">
                <input type="hidden" name="csrf" value={props.viewer.csrf} />
                <button class="secondary small" type="submit">
                  Sign out
                </button>
              </form>
            </>
          ) : null}
        </header>
        <main id="main" tabindex={-1}>
          {props.children}
        </main>
        <div id="live-status" class="sr-only" role="status" aria-live="polite" />
      </body>
    </html>
  );
}

const READABLE: Record<string, string> = {
  forbidden: "Your role does not allow this.",
  unauthenticated: "Your sign-in has expired. Sign in again.",
  "precondition-failed": "Someone changed this passport after you opened the page. Reload it and try again.",
  "invalid-transition": "That state change is not allowed from the current state.",
  "duplicate-identity": "Another passport already identifies this object.",
  "binding-exists": "This passport already has that binding.",
  "invalid-request": "Some of what you entered was not accepted.",
  "identity-not-found": "No passport with this id in your organisations.",
  unavailable: "A service we depend on is briefly unavailable. Try again in a moment.",
  internal: "Something went wrong on our side. Try again; if it persists, contact support with the time shown.",
};

/**
 * An API problem as a readable message: what happened in plain words, the API's own detail, and
 * the problem type for support. `id` lets a form point at it with aria-describedby.
 */
export function ProblemMessage(props: { problem: Problem; id?: string }) {
  const slug = problemSlug(props.problem);
  const errors = Array.isArray(props.problem.errors)
    ? (props.problem.errors as { path: string; message: string }[])
    : [];
  return (
    <div class="problem" role="alert" id={props.id}>
      <p>
        <strong>{READABLE[slug] ?? props.problem.title}</strong>
        {props.problem.detail ? ` ${props.problem.detail}` : null}
      </p>
      {errors.length > 0 ? (
        <ul>
          {errors.map((e) => (
            <li>
              {e.path ? <code>{e.path}</code> : null} {e.message}
            </li>
          ))}
        </ul>
      ) : null}
      <p class="hint">
        Problem type <code>{slug}</code> (HTTP {props.problem.status}), {new Date().toISOString()}
      </p>
    </div>
  );
}

/** The message for one form field from a problem's `errors` (paths as the API names them). */
export function fieldError(problem: Problem | undefined, path: string): string | undefined {
  if (!problem || !Array.isArray(problem.errors)) return undefined;
  const found = (problem.errors as { path: string; message: string }[]).find((e) => e.path === path);
  return found?.message;
}

export function FieldError(props: { id: string; message: string | undefined }) {
  return props.message ? (
    <p class="field-error" id={props.id}>
      {props.message}
    </p>
  ) : null;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().replace("T", " ").slice(0, 19)} UTC`;
}

export function Time(props: { at: string | null | undefined }) {
  return props.at ? <time datetime={props.at}>{formatTime(props.at)}</time> : null;
}
