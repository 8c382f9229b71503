import { identityIdDefect } from "@passport/protocol";
import type { MiddlewareHandler } from "hono";
import { DEFAULT_MAX_BYTES, type FetchLike, insecureAddress, platformFetch } from "./http.ts";
import { checkStatusToken, fetchStatusToken, STATUS_HEADER } from "./status.ts";

export interface StaplingOptions {
  /** The resolver's base URL (https; plain http only to loopback). */
  resolver: string;
  /** The passport of the API this middleware serves. */
  identityId: string;
  /** Defaults to the platform's `fetch`. */
  fetch?: FetchLike;
  /** The response header the token is stapled in; default `Passport-Status`. */
  header?: string;
  /**
   * Fetch a new token once fewer than this many seconds remain before the current one expires;
   * default 30 (tokens live 60 s). Until the new one arrives, or if fetching it fails, the
   * current one is served while it is valid.
   */
  refreshBeforeSeconds?: number;
  /**
   * With no valid token to staple: `open` (the default) answers without the header, and a
   * consumer that needs current proof fetches it itself; `closed` answers 503 without running
   * the handler, for an API that must never answer without proof of its current status.
   */
  failMode?: "open" | "closed";
  /** Per status request; default 3000. */
  timeoutMs?: number;
  /** The clock, in milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
  /** Told of every failed refresh (the middleware itself never logs). */
  onError?: (error: Error) => void;
}

interface Held {
  token: string;
  expiresAt: number;
}

const PROBLEM_HEADERS = { "content-type": "application/problem+json", "cache-control": "no-store", "retry-after": "5" };

/**
 * Keeps the current status token of one passport: fetched from the resolver's status route,
 * refreshed before it expires, one request at a time however many answers wait for it. The token
 * is not verified here (the consumer does that, against its pinned keys); it is only read for its
 * identity and expiry, so nothing expired or about another passport is ever stapled.
 */
export class StatusStapler {
  readonly #options: Required<Pick<StaplingOptions, "refreshBeforeSeconds" | "timeoutMs">> & StaplingOptions;
  readonly #resolver: string;
  #held: Held | undefined;
  #refreshing: Promise<Held | undefined> | undefined;

  constructor(options: StaplingOptions) {
    const unsafe = insecureAddress(options.resolver);
    if (unsafe) throw new TypeError(`resolver: "${options.resolver}" ${unsafe}`);
    if (identityIdDefect(options.identityId))
      throw new TypeError(`identityId: "${options.identityId}" is not an identity id`);
    this.#options = { refreshBeforeSeconds: 30, timeoutMs: 3000, ...options };
    this.#resolver = options.resolver.replace(/\/+$/, "");
  }

  /**
   * A token valid now; undefined when none can be had. Close to expiry a refresh starts and the
   * held token is answered meanwhile (`waitUntil` keeps the refresh alive past the answer, as a
   * Worker's `ctx.waitUntil` does); with no valid token held, the refresh is awaited.
   */
  async current(waitUntil?: (promise: Promise<unknown>) => void): Promise<string | undefined> {
    const now = (this.#options.now ?? Date.now)();
    const held = this.#held;
    if (held && now < held.expiresAt - this.#options.refreshBeforeSeconds * 1000) return held.token;
    if (!this.#refreshing) {
      this.#refreshing = this.#refresh().finally(() => {
        this.#refreshing = undefined;
      });
      waitUntil?.(this.#refreshing);
    }
    if (held && now < held.expiresAt) return held.token;
    const fresh = await this.#refreshing;
    const best = fresh ?? this.#held;
    return best && (this.#options.now ?? Date.now)() < best.expiresAt ? best.token : undefined;
  }

  /**
   * Drops the held token when `identityId` is this stapler's passport (a change notification said
   * it changed), so the next answer staples a token fetched after the change.
   */
  invalidate(identityId: string): void {
    if (identityId === this.#options.identityId) this.#held = undefined;
  }

  async #refresh(): Promise<Held | undefined> {
    try {
      const fetched = await fetchStatusToken(this.#resolver, this.#options.identityId, {
        fetch: this.#options.fetch ?? platformFetch,
        timeoutMs: this.#options.timeoutMs,
        retries: 0,
        retryDelayMs: 0,
        maxBytes: DEFAULT_MAX_BYTES,
      });
      if ("network" in fetched) throw new Error(fetched.network.detail);
      if ("unavailable" in fetched) throw new Error(fetched.unavailable);
      const { token } = fetched;
      const now = (this.#options.now ?? Date.now)();
      const check = await checkStatusToken(token, undefined, this.#options.identityId, now, Number.POSITIVE_INFINITY);
      if (!check.ok) throw new Error(`the status route's token is not usable: ${check.detail}`);
      this.#held = { token, expiresAt: check.claims.exp * 1000 };
      return this.#held;
    } catch (error) {
      this.#options.onError?.(error instanceof Error ? error : new Error(String(error)));
      return undefined;
    }
  }
}

/**
 * Hono middleware for an API provider: staples its passport's current status token to every
 * answer, in the `Passport-Status` header (and exposes it to browsers through CORS), so a
 * consumer deciding at `higher` consequence needs no request of its own (docs/verifier.md,
 * Stapling). Hono is an optional peer dependency: this module imports only its types.
 * @example
 * import { passportStatus } from "@passport/verifier/hono";
 * app.use("*", passportStatus({ resolver: "https://resolver.example", identityId: "psp_…" }));
 */
export function passportStatus(options: StaplingOptions): MiddlewareHandler {
  const stapler = new StatusStapler(options);
  const header = options.header ?? STATUS_HEADER;
  return async (c, next) => {
    let waitUntil: ((promise: Promise<unknown>) => void) | undefined;
    try {
      const ctx = c.executionCtx;
      waitUntil = (promise) => ctx.waitUntil(promise);
    } catch {
      // Not on Workers (Node, Bun, tests): nothing ends the refresh early.
    }
    const token = await stapler.current(waitUntil);
    if (!token && options.failMode === "closed") {
      return new Response(
        JSON.stringify({
          type: "urn:svc:passport:problem:unavailable",
          title: "Unavailable",
          status: 503,
          detail:
            "This API answers only with proof of its passport's current status, which could not be had; try again shortly.",
        }),
        { status: 503, headers: PROBLEM_HEADERS },
      );
    }
    await next();
    if (!token) return;
    c.res.headers.set(header, token);
    const exposed = c.res.headers.get("access-control-expose-headers");
    if (c.res.headers.has("access-control-allow-origin") && !exposed?.toLowerCase().includes(header.toLowerCase())) {
      c.res.headers.set("access-control-expose-headers", exposed ? `${exposed}, ${header}` : header);
    }
  };
}
