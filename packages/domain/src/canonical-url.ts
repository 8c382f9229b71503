// One canonical form for every web URL a tenant gives (docs/canonical-urls.md). It is what is
// checked, stored, compared for duplicates and conflicts, indexed and matched, so two spellings of
// one address never count as two. This module stays free of zod: the resolver imports it.

const WEB_SCHEMES = new Set(["http:", "https:", "ws:", "wss:"]);

/**
 * The canonical form of an http(s) or ws(s) URL, or undefined when `value` is not one or its host
 * has an empty label. The WHATWG URL parser (as in workerd and Node) already lower-cases the scheme
 * and host, maps an internationalised host to its ASCII (punycode) form by UTS #46, writes IPv4 in
 * dotted decimal, drops the default port and resolves `.` and `..` path segments; on top of it the
 * host loses the root's trailing dot, and the fragment and an empty query are dropped (a fragment
 * is never sent, so it names nothing the server sees).
 * @example
 * canonicalUrl("HTTPS://Pay.Example.COM.:443/v1?#top"); // "https://pay.example.com/v1"
 * canonicalUrl("https://bücher.example/"); // "https://xn--bcher-kva.example/"
 */
export function canonicalUrl(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (!WEB_SCHEMES.has(url.protocol)) return undefined;
  const host = url.hostname.endsWith(".") ? url.hostname.slice(0, -1) : url.hostname;
  if (host === "" || host.startsWith(".") || host.endsWith(".") || host.includes("..")) return undefined;
  if (host !== url.hostname) url.hostname = host;
  url.hash = "";
  if (url.search === "") url.search = "";
  return url.href;
}

/**
 * The stored form of a binding value: its canonical URL when it is a web URL, otherwise the value
 * as given (a package URL, an ssh repository address, a name or an id is compared exactly).
 */
export function canonicalBindingValue(value: string): string {
  return canonicalUrl(value) ?? value;
}
