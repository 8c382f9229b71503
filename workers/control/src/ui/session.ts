import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { base64url, decodeJwt } from "jose";

// Any Hono context: these helpers read only the request and set only response headers.
// biome-ignore lint/suspicious/noExplicitAny: independent of the app's variables
type UiContext = Context<any>;

const SECURE_COOKIE = "__Host-passport-session";
// Browsers refuse Secure cookies set over plain http, which only local development serves.
const PLAIN_COOKIE = "passport-session";
const MAX_SESSION_SECONDS = 12 * 60 * 60;

function secureOrigin(c: UiContext): boolean {
  return new URL(c.req.url).protocol === "https:";
}

export interface Session {
  token: string;
  /** `cookie`: signed in on the sign-in page (development); `access`: Cloudflare Access's assertion. */
  via: "cookie" | "access";
}

/**
 * The caller's credential: the session cookie set by the development sign-in, else the JWT that
 * Cloudflare Access adds to every request it lets through (production sign-in).
 */
export function currentSession(c: UiContext): Session | undefined {
  const cookie = getCookie(c, secureOrigin(c) ? SECURE_COOKIE : PLAIN_COOKIE);
  if (cookie) return { token: cookie, via: "cookie" };
  const access = c.req.header("cf-access-jwt-assertion");
  return access ? { token: access, via: "access" } : undefined;
}

function expiresIn(token: string): number {
  try {
    const { exp } = decodeJwt(token);
    if (typeof exp === "number") return Math.max(0, Math.floor(exp - Date.now() / 1000));
  } catch {}
  return MAX_SESSION_SECONDS;
}

/** Keeps a verified token in an HttpOnly, SameSite=Lax cookie that lives no longer than the token. */
export function startSession(c: UiContext, token: string): void {
  const secure = secureOrigin(c);
  setCookie(c, secure ? SECURE_COOKIE : PLAIN_COOKIE, token, {
    path: "/",
    httpOnly: true,
    secure,
    sameSite: "Lax",
    maxAge: Math.min(expiresIn(token), MAX_SESSION_SECONDS),
  });
}

export function endSession(c: UiContext): void {
  const secure = secureOrigin(c);
  deleteCookie(c, secure ? SECURE_COOKIE : PLAIN_COOKIE, { path: "/", secure, httpOnly: true, sameSite: "Lax" });
}

/**
 * The synchronizer token every form carries: a hash of the session's credential. Only a page
 * rendered for this session knows it (the cookie is HttpOnly), and it changes with the session.
 * @example
 * <input type="hidden" name="csrf" value={await csrfToken(session.token)} />
 */
export async function csrfToken(sessionToken: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`passport-dashboard-csrf\n${sessionToken}`),
  );
  return base64url.encode(new Uint8Array(digest));
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * Refuses a cookie- or Access-authenticated form post that was not rendered for this session: the
 * form must carry this session's synchronizer token. (Where the post came from is checked before,
 * for every Dashboard post, by Hono's CSRF middleware: guard.tsx.)
 */
export async function refuseForgedPost(session: Session, form: FormData): Promise<string | undefined> {
  const presented = form.get("csrf");
  if (typeof presented !== "string" || !constantTimeEqual(presented, await csrfToken(session.token))) {
    return "This form has expired (it was loaded under another sign-in). Reload the page and try again.";
  }
  return undefined;
}
