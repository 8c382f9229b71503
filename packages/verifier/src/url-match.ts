/**
 * An http(s) URL as the service stores it (docs/canonical-urls.md): the WHATWG parser lower-cases
 * the host, maps an internationalised one to ASCII and drops the default port; the root's trailing
 * dot is dropped here, so `api.example.com.` is `api.example.com`.
 */
function httpUrl(value: string): URL | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  if (url.hostname.endsWith(".") && url.hostname.length > 1) url.hostname = url.hostname.slice(0, -1);
  return url;
}

function trimSlash(path: string): string {
  return path.endsWith("/") ? path.slice(0, -1) : path;
}

/**
 * True when `target` (the address about to be called) is the bound base URL or lies below it:
 * same scheme, host and port, and a path equal to the bound path or under it at a segment
 * boundary. Query and fragment are ignored. Values that are not http(s) URLs match only exactly.
 * @example
 * coveredBy("https://api.example.com/v1/charges", "https://api.example.com/v1"); // true
 * coveredBy("https://api.example.com/v10", "https://api.example.com/v1"); // false
 */
export function coveredBy(target: string, bound: string): boolean {
  const t = httpUrl(target);
  const b = httpUrl(bound);
  if (!t || !b) return target === bound;
  if (t.origin !== b.origin) return false;
  const boundPath = trimSlash(b.pathname);
  const targetPath = trimSlash(t.pathname);
  return targetPath === boundPath || targetPath.startsWith(`${boundPath}/`);
}

/**
 * True when two binding values name the same thing: normalised equality for http(s) URLs
 * (case of scheme and host, IDNA, trailing dot, default port, trailing slash, fragment), exact
 * equality otherwise.
 * @example
 * sameBindingValue("HTTPS://Api.Example.com:443/v1/", "https://api.example.com/v1"); // true
 */
export function sameBindingValue(a: string, b: string): boolean {
  const x = httpUrl(a);
  const y = httpUrl(b);
  if (!x || !y) return a === b;
  return x.origin === y.origin && trimSlash(x.pathname) === trimSlash(y.pathname) && x.search === y.search;
}

/**
 * The address without user information, query or fragment, so an outcome never repeats a
 * credential someone put into a URL (spec 5.5).
 * @example
 * redactUrl("https://user:secret@api.example.com/v1?key=abc"); // "https://api.example.com/v1"
 */
export function redactUrl(value: string): string {
  const url = httpUrl(value);
  if (!url) return value;
  return `${url.origin}${url.pathname}`;
}

/**
 * A DNS name as evidence scopes write one: `host`, `dns:host`, or the record checked,
 * `_passport.host TXT` (underscore labels and the record type dropped).
 */
function dnsName(scope: string): string | undefined {
  const name = scope
    .trim()
    .replace(/^dns:/i, "")
    .replace(/\s+TXT$/i, "")
    .replace(/^(_[a-z0-9-]+\.)+/i, "")
    .replace(/\.$/, "")
    .toLowerCase();
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(name) ? name : undefined;
}

/**
 * True when an evidence scope names an address (an http(s) URL or origin, or a DNS name) rather
 * than free text; only such a scope can be compared with a target.
 */
export function isAddressScope(scope: string): boolean {
  return httpUrl(scope) !== undefined || dnsName(scope) !== undefined;
}

/**
 * True when evidence whose scope is `scope` speaks for `target`: a URL or origin scope covers the
 * target as a bound base URL would ({@link coveredBy}); a DNS name covers that host and the hosts
 * below it (control of a zone includes its subdomains). Non-URL targets need the exact scope.
 * @example
 * scopeCovers("https://api.example.com", "https://api.example.com/v1"); // true
 * scopeCovers("example.com", "https://api.example.com/v1"); // true
 * scopeCovers("https://example.com", "https://api.example.com/v1"); // false
 */
export function scopeCovers(scope: string, target: string): boolean {
  const t = httpUrl(target);
  if (!t) return scope === target;
  if (httpUrl(scope)) return coveredBy(target, scope);
  const name = dnsName(scope);
  if (!name) return false;
  const host = t.hostname.toLowerCase();
  return host === name || host.endsWith(`.${name}`);
}
