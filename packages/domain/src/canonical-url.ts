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
  const url = URL.parse(value);
  return url ? canonicalOf(url) : undefined;
}

/** {@link canonicalUrl} of a URL already parsed (which it rewrites in place): for a caller that also reads its parts. */
export function canonicalOf(url: URL): string | undefined {
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

// RFC 3492 (punycode) decoding, to show an internationalised host as people read it beside the
// ASCII form that is stored. A few lines rather than a dependency: the resolver shows it too.
const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;

function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / 700) : delta >> 1;
  d += Math.floor(d / points);
  let k = 0;
  while (d > ((BASE - T_MIN) * T_MAX) >> 1) {
    d = Math.floor(d / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + 38));
}

function digit(code: number): number | undefined {
  if (code >= 48 && code <= 57) return code - 22;
  if (code >= 65 && code <= 90) return code - 65;
  if (code >= 97 && code <= 122) return code - 97;
  return undefined;
}

/** The code points a punycode label (without `xn--`) stands for, or undefined when it is malformed. */
function decodePunycode(input: string): string | undefined {
  const delimiter = input.lastIndexOf("-");
  const output: number[] = [];
  for (let j = 0; j < Math.max(delimiter, 0); j++) {
    const code = input.charCodeAt(j);
    if (code >= 0x80) return undefined;
    output.push(code);
  }
  let n = 128;
  let bias = 72;
  let i = 0;
  for (let at = delimiter >= 0 ? delimiter + 1 : 0; at < input.length; ) {
    const before = i;
    let weight = 1;
    for (let k = BASE; ; k += BASE) {
      const d = at < input.length ? digit(input.charCodeAt(at++)) : undefined;
      if (d === undefined) return undefined;
      i += d * weight;
      if (i > 0x7fffffff) return undefined;
      const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
      if (d < t) break;
      weight *= BASE - t;
    }
    const length = output.length + 1;
    bias = adapt(i - before, length, before === 0);
    n += Math.floor(i / length);
    i %= length;
    if (n > 0x10ffff) return undefined;
    output.splice(i, 0, n);
    i++;
  }
  return String.fromCodePoint(...output);
}

/**
 * A host name as people read it: each `xn--` label decoded (IDNA ToUnicode's decoding step); a
 * label that does not decode is kept as it is.
 * @example
 * unicodeHost("xn--bcher-kva.example"); // "bücher.example"
 */
export function unicodeHost(host: string): string {
  return host
    .split(".")
    .map((label) => (label.toLowerCase().startsWith("xn--") ? (decodePunycode(label.slice(4)) ?? label) : label))
    .join(".");
}

/**
 * How an http(s) URL's host reads in Unicode when it is an internationalised name, so a page can
 * show it beside the ASCII form; undefined for an ASCII-only host or a value that is not a URL.
 * @example
 * internationalHost("https://xn--bcher-kva.example/v1"); // "bücher.example"
 */
export function internationalHost(value: string): string | undefined {
  const hostname = URL.parse(value)?.hostname;
  if (hostname === undefined) return undefined;
  const readable = unicodeHost(hostname);
  return readable === hostname ? undefined : readable;
}
