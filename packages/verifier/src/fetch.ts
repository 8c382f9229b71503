// `@passport/verifier/fetch`: the consumer's side of the call path (docs/reciprocal-trust.md, Call
// path). Before a request leaves, the API's passport for its URL is resolved and checked; with a
// signer the request is signed as the agent (RFC 9421, Web Bot Auth); with the agent's own stapler
// its current status token rides along. A check that does not pass never sends the request: the
// call fails with the outcome instead. Redirects are never followed: the passport checked is the
// first URL's, so a 3xx is returned as it is (call its Location again to have that one checked).

import { identityIdDefect } from "@passport/protocol";
import type { RequestSigner } from "./call/web-bot-auth.ts";
import type { Expectation } from "./expectation.ts";
import type { StatusStapler } from "./hono.ts";
import { insecureAddress, readStrictJson } from "./http.ts";
import type { VerifyOutcome } from "./outcome.ts";
import { STATUS_HEADER } from "./status.ts";
import { coveredBy } from "./url-match.ts";
import type { Verifier } from "./verifier.ts";

export { type AgentKey, RequestSigner } from "./call/web-bot-auth.ts";
export { PASSPORT_AGENT_HEADER } from "./caller.ts";

/**
 * Where a provider names its passports: the same document the service reads to prove an
 * `endpoint` binding (docs/bindings.md), `{"identities":[{"identity_id":"psp_…"}]}`. Naming an id
 * there proves nothing by itself: the passport counts only when its record has a verified
 * endpoint binding covering the URL called.
 */
export const PASSPORT_DOCUMENT_PATH = "/.well-known/passport-identity.json";

/** How the check is made for a call: an expectation, or (with the policy module) a policy decision. */
export type CallCheck = (identityId: string, url: string) => Promise<VerifyOutcome>;

export interface PassportFetchOptions {
  verifier: Verifier;
  /**
   * The API passports the consumer knows: a URL (an origin or a base URL) to an identity id. The
   * longest configured prefix covering the request's URL applies.
   */
  apis?: Record<string, string>;
  /** For a URL no `apis` entry covers, read the provider's {@link PASSPORT_DOCUMENT_PATH}; default true. */
  discover?: boolean;
  /**
   * What the API's passport must satisfy (besides `family: "api"` and a verified endpoint binding
   * covering the URL, which are always required); default `{ consequence: "lower" }`.
   */
  expectation?: Omit<Expectation, "baseUrl" | "record">;
  /** Replaces the expectation: decide on the passport yourself (for example with a policy). */
  check?: CallCheck;
  /** Sign each request as the agent (`RequestSigner.create(...)`). */
  signer?: RequestSigner;
  /** The agent's own status token stapler: its current token is sent as `Passport-Status`. */
  stapler?: StatusStapler;
  /** The network call, and the discovery document's; default the platform's `fetch`. */
  fetch?: (request: Request) => Promise<Response>;
  /** How long a discovered document is kept, in seconds; default 300. */
  discoveryTtlSeconds?: number;
}

/** The request was not sent: the API's passport did not pass, or none could be found for its URL. */
export class PassportCheckError extends Error {
  readonly outcome: VerifyOutcome | undefined;
  readonly identityId: string | undefined;
  readonly url: string;

  constructor(url: string, message: string, outcome?: VerifyOutcome, identityId?: string) {
    super(message);
    this.name = "PassportCheckError";
    this.url = url;
    this.outcome = outcome;
    this.identityId = identityId;
  }
}

interface Discovered {
  ids: string[];
  until: number;
}

const MAX_CANDIDATES = 4;
/** Largest discovery document read, in bytes. */
const MAX_DOCUMENT_BYTES = 65_536;

/**
 * A `fetch` that checks the API's passport before every call (and optionally signs as the agent).
 * Redirects are not followed: a 3xx answer is returned as it is, and calling its `Location`
 * through this `fetch` checks that URL's passport in turn.
 * @example
 * const call = passportFetch({ verifier, apis: { "https://payments.example/v1": "psp_…" }, expectation: { consequence: "higher" }, signer });
 * try { const answer = await call("https://payments.example/v1/charges"); }
 * catch (error) { if (error instanceof PassportCheckError) failSafely(error.outcome); }
 */
export function passportFetch(
  options: PassportFetchOptions,
): (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> {
  const apis = Object.entries(options.apis ?? {}).map(([prefix, id]) => {
    if (identityIdDefect(id)) throw new TypeError(`apis["${prefix}"]: "${id}" is not an identity id`);
    return [prefix, id] as const;
  });
  apis.sort((a, b) => b[0].length - a[0].length);
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const discovered = new Map<string, Discovered>();
  const ttl = (options.discoveryTtlSeconds ?? 300) * 1000;
  const check: CallCheck =
    options.check ??
    ((id, url) =>
      options.verifier.verify(id, { consequence: "lower", ...options.expectation, family: "api", baseUrl: url }));

  async function discover(origin: string, signal: AbortSignal | null): Promise<string[]> {
    const held = discovered.get(origin);
    if (held && held.until > Date.now()) return held.ids;
    let ids: string[] = [];
    try {
      const response = await send(
        new Request(`${origin}${PASSPORT_DOCUMENT_PATH}`, {
          headers: { accept: "application/json" },
          redirect: "manual",
          signal: AbortSignal.any([AbortSignal.timeout(3000), ...(signal ? [signal] : [])]),
        }),
      );
      if (response.status === 200) {
        const read = await readStrictJson(response, MAX_DOCUMENT_BYTES);
        const body = read.ok ? (read.value as { identities?: unknown } | null) : undefined;
        if (Array.isArray(body?.identities)) {
          ids = body.identities
            .map((entry) => (entry as { identity_id?: unknown } | null)?.identity_id)
            .filter((id): id is string => typeof id === "string" && !identityIdDefect(id))
            .slice(0, MAX_CANDIDATES);
        }
      } else {
        await response.body?.cancel();
      }
    } catch {
      // No document (or not JSON): nothing discovered, so the call is refused below.
    }
    discovered.set(origin, { ids, until: Date.now() + ttl });
    return ids;
  }

  return async (input, init) => {
    const request = new Request(input, init);
    const url = request.url;
    const unsafe = insecureAddress(url);
    if (unsafe) throw new PassportCheckError(url, `Not called: "${url}" ${unsafe}.`);
    const configured = apis.find(([prefix]) => coveredBy(url, prefix))?.[1];
    const candidates =
      configured !== undefined
        ? [configured]
        : options.discover === false
          ? []
          : await discover(new URL(url).origin, request.signal);
    if (candidates.length === 0) {
      throw new PassportCheckError(url, `Not called: no API passport is known for ${new URL(url).origin}.`);
    }
    let refused: { outcome: VerifyOutcome; id: string } | undefined;
    for (const id of candidates) {
      const outcome = await check(id, url);
      if (outcome.ok) {
        let outgoing = request;
        if (options.stapler) {
          const token = await options.stapler.current();
          if (token) {
            const headers = new Headers(outgoing.headers);
            headers.set(STATUS_HEADER, token);
            outgoing = new Request(outgoing, { headers });
          }
        }
        if (options.signer) outgoing = await options.signer.sign(outgoing);
        // The signature, the agent's name and its status (and a 307/308's body) are for this
        // checked URL only: a redirect elsewhere is the caller's to call, checked anew.
        return send(new Request(outgoing, { redirect: "manual" }));
      }
      refused ??= { outcome, id };
    }
    const { outcome, id } = refused as { outcome: VerifyOutcome; id: string };
    throw new PassportCheckError(
      url,
      `Not called: the API's passport ${id} did not pass (${outcome.outcome}, next step ${outcome.next_step}): ${outcome.reason}`,
      outcome,
      id,
    );
  };
}
