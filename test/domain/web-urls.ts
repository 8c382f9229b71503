import fc from "fast-check";

/** Labels outside ASCII, including ones with upper-case letters and one IDNA maps (ß). */
const UNICODE_LABELS = ["bücher", "例子", "пример", "straße", "ÉCOLE", "παράδειγμα"];

/**
 * Upper-cases every other ASCII letter: `example.com` becomes `ExAmPlE.CoM`. Only ASCII: beyond it
 * upper case can name another host (`ß` upper-cases to `SS`).
 */
const mixedCase = (text: string) =>
  [...text].map((c, i) => (i % 2 === 0 && /[a-z]/.test(c) ? c.toUpperCase() : c)).join("");

/**
 * Web URLs as people type them, with the spellings `canonicalUrl` rewrites: fc.webUrl's (lower-case
 * ASCII hosts, no port) given, each at random, an upper-case scheme and host, the scheme's default
 * port, a Unicode first label and the root's trailing dot. `plain` is the same address with only
 * the Unicode label added: its canonical form must be the typed one's.
 */
export const typedWebUrl = fc
  .record({
    url: fc.webUrl({ validSchemes: ["http", "https"], withQueryParameters: true, withFragments: true }),
    upper: fc.boolean(),
    port: fc.boolean(),
    label: fc.option(fc.constantFrom(...UNICODE_LABELS), { nil: undefined }),
    dot: fc.boolean(),
  })
  .map(({ url, upper, port, label, dot }) => {
    const [, scheme = "", host = "", rest = ""] = /^([a-z]+):\/\/([^/?#]*)(.*)$/s.exec(url) ?? [];
    const named = label ? `${label}.${host}` : host;
    const typedScheme = upper ? scheme.toUpperCase() : scheme;
    const typedHost = `${upper ? mixedCase(named) : named}${dot ? "." : ""}${port ? (scheme === "https" ? ":443" : ":80") : ""}`;
    return { typed: `${typedScheme}://${typedHost}${rest}`, plain: `${scheme}://${named}${rest}` };
  });
