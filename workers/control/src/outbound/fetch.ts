import { readCapped } from "./read-capped.ts";
// The one way the control plane fetches a tenant-named URL (binding checks, docs/bindings.md).
// A tenant chooses the URL, so every rule here assumes a hostile one: https only, the bound host
// only, no credentials, redirects only within the same origin, a short timeout and a small size cap
// enforced while the body streams in. Every refusal and failure has a precise reason, which the
// check records as the binding's last check.

/** Where requests go: global fetch in production, the hosts simulator in development and tests. */
export interface Transport {
  fetch(request: Request): Promise<Response>;
}

export interface OutboundPolicy {
  /** Plain http to loopback addresses is allowed (development only). */
  allowLoopbackHttp: boolean;
  /** Host names of the service itself, never fetched (resolver, control plane). */
  ownHosts: readonly string[];
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
}

export type Fetched = { ok: true; url: string; contentType: string; body: string };
/**
 * Why a fetch gave no usable answer. `unreachable` marks a failure that says nothing about the
 * document (a timeout, a network or DNS failure, HTTP 408, 429 or 5xx): the host may answer later.
 */
export type FetchFailure = { ok: false; reason: string; unreachable?: true };

/** Statuses that mean "not now" rather than "not here". */
function transientStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
// Names that only mean something inside a network, never a tenant's public host.
// .test and .invalid are reserved (RFC 2606) and never public either.
const PRIVATE_SUFFIXES = [
  ".localhost",
  ".local",
  ".internal",
  ".home.arpa",
  ".lan",
  ".intranet",
  ".corp",
  ".test",
  ".invalid",
];

/**
 * The host name as DNS resolves it: lower case, without the root label's trailing dot
 * (`localhost.` is `localhost`). Undefined when a name keeps an empty label (`a..b`, `host..`),
 * which no public name has.
 */
function dnsHost(hostname: string): string | undefined {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return host === "" || host.startsWith(".") || host.endsWith(".") || host.includes("..") ? undefined : host;
}

function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith("[") || /^[\d.]+$/.test(hostname) || /^0x[\da-f]+$/i.test(hostname);
}

/**
 * Why `url` may not be fetched under `policy`, or undefined when it may. Only public DNS names on
 * the default https port: no IP literals (no private ranges, metadata endpoints or encodings of
 * them), no single-label or internal names, none of the service's own hosts, no user info.
 */
export function refusal(url: URL, policy: OutboundPolicy): string | undefined {
  // Every comparison below is on the name DNS resolves, so `localhost.`, `metadata.google.internal.`
  // or the resolver's host with a trailing dot are refused like the names without it.
  const host = dnsHost(url.hostname);
  if (host === undefined) return `${url.hostname} is not a public host name`;
  const loopbackDevelopment = policy.allowLoopbackHttp && url.protocol === "http:" && LOOPBACK.has(host);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopbackDevelopment)) {
    return `only https URLs are checked, not ${url.protocol.replace(":", "")}`;
  }
  if (url.username || url.password) return "URLs with user information are not checked";
  if (loopbackDevelopment) return undefined;
  if (isIpLiteral(host)) return "IP address literals are not checked; bind a DNS name";
  if (LOOPBACK.has(host) || !host.includes(".") || PRIVATE_SUFFIXES.some((s) => host.endsWith(s))) {
    return `${host} is not a public host name`;
  }
  if (policy.ownHosts.some((own) => dnsHost(own) === host)) return `${host} is this service's own host`;
  if (url.port !== "") return "only the default https port is checked";
  return undefined;
}

async function readText(response: Response, maxBytes: number, signal: AbortSignal): Promise<string | FetchFailure> {
  const bytes = await readCapped(response, maxBytes, signal);
  if (bytes === "too-large") return { ok: false, reason: `the answer is larger than ${maxBytes} bytes` };
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return { ok: false, reason: "the answer is not valid UTF-8 text" };
  }
}

function mediaType(response: Response): string {
  return (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * GETs `target` through `transport` under `policy` and returns its text when the final answer is a
 * 200 whose media type is one of `accept` (an entry ending in "+json" also accepts any
 * `…+json`). Redirects are followed by hand, only within the same origin, at most
 * `policy.maxRedirects` times. Nothing the tenant controls is sent: no cookies, no authorization.
 */
export async function fetchChecked(
  transport: Transport,
  policy: OutboundPolicy,
  target: string,
  accept: readonly string[],
): Promise<Fetched | FetchFailure> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  const refused = refusal(url, policy);
  if (refused) return { ok: false, reason: refused };
  const origin = url.origin;
  const signal = AbortSignal.timeout(policy.timeoutMs);
  try {
    for (let hop = 0; ; hop++) {
      const response = await transport.fetch(
        new Request(url, {
          method: "GET",
          redirect: "manual",
          signal,
          headers: { accept: accept.join(", "), "user-agent": "passport-service-binding-check" },
        }),
      );
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get("location");
        if (!location) return { ok: false, reason: `${url.href} answered ${response.status} without a location` };
        const next = new URL(location, url);
        if (next.origin !== origin) {
          return { ok: false, reason: `${url.href} redirects to another origin (${next.origin}); not followed` };
        }
        // The same rules hold for every hop: a same-origin location may still carry user information.
        const refusedHop = refusal(next, policy);
        if (refusedHop)
          return { ok: false, reason: `${url.href} redirects to a URL that is not checked: ${refusedHop}` };
        if (hop + 1 > policy.maxRedirects) return { ok: false, reason: `more than ${policy.maxRedirects} redirects` };
        url = next;
        continue;
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        const reason = `${url.href} answered HTTP ${response.status}`;
        return transientStatus(response.status) ? { ok: false, reason, unreachable: true } : { ok: false, reason };
      }
      const type = mediaType(response);
      const acceptable = accept.some((a) => a === type || (a.endsWith("+json") && type.endsWith("+json")));
      if (!acceptable) {
        await response.body?.cancel();
        return {
          ok: false,
          reason: `${url.href} answered ${type || "no content type"}, expected ${accept.join(" or ")}`,
        };
      }
      const body = await readText(response, policy.maxBytes, signal);
      if (typeof body !== "string") return body;
      return { ok: true, url: url.href, contentType: type, body };
    }
  } catch (error) {
    if (signal.aborted) {
      return {
        ok: false,
        reason: `no complete answer from ${url.host} within ${policy.timeoutMs} ms`,
        unreachable: true,
      };
    }
    return {
      ok: false,
      reason: `${url.host} could not be reached (${error instanceof Error ? error.name : "error"})`,
      unreachable: true,
    };
  }
}

export type Posted = { ok: true; status: number; body: string };

/**
 * POSTs a text body to `target` through `transport` under `policy` (the same address rules as
 * {@link fetchChecked}; no redirects followed) and returns the status and text of any answer, for
 * protocols whose error statuses carry meaning (a tlog-witness 409 names the witness's size).
 */
export function postText(
  transport: Transport,
  policy: OutboundPolicy,
  target: URL,
  body: string,
  userAgent: string,
): Promise<Posted | FetchFailure> {
  return postBody(transport, policy, target, body, {
    "content-type": "text/plain; charset=utf-8",
    "user-agent": userAgent,
  });
}

/**
 * POSTs `body` with `headers` to `target` (the address rules of {@link fetchChecked}, no
 * redirects followed: a 3xx is an answer like any other) and returns the status and text of the
 * answer. A timeout, a network failure or an answer past the size cap is a failure; those that
 * say nothing about the receiver's will (a timeout or an unreachable host) are `unreachable`.
 */
export async function postBody(
  transport: Transport,
  policy: OutboundPolicy,
  target: URL,
  body: string,
  headers: Record<string, string>,
): Promise<Posted | FetchFailure> {
  const refused = refusal(target, policy);
  if (refused) return { ok: false, reason: refused };
  const signal = AbortSignal.timeout(policy.timeoutMs);
  try {
    const response = await transport.fetch(
      new Request(target, { method: "POST", redirect: "manual", signal, body, headers }),
    );
    const text = await readText(response, policy.maxBytes, signal);
    if (typeof text !== "string") return text;
    return { ok: true, status: response.status, body: text };
  } catch (error) {
    if (signal.aborted) {
      return {
        ok: false,
        reason: `no complete answer from ${target.host} within ${policy.timeoutMs} ms`,
        unreachable: true,
      };
    }
    return {
      ok: false,
      reason: `${target.host} could not be reached (${error instanceof Error ? error.name : "error"})`,
      unreachable: true,
    };
  }
}
