import { canonicalUrl, internationalHost, lookalikeRefusal, unicodeHost } from "@passport/domain";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { typedWebUrl } from "./web-urls.ts";

describe("canonical URLs", () => {
  it.each([
    ["HTTPS://Pay.Example.COM.:443/v1?#top", "https://pay.example.com/v1"],
    ["https://bücher.example", "https://xn--bcher-kva.example/"],
    ["https://api.example.com/v1?x=1#f", "https://api.example.com/v1?x=1"],
    ["wss://Mcp.Example.com:443/sse", "wss://mcp.example.com/sse"],
    ["https://api.example.com:8443/v1/", "https://api.example.com:8443/v1/"],
  ])("%s is %s", (typed, canonical) => {
    expect(canonicalUrl(typed)).toBe(canonical);
  });

  it("refuses hosts with an empty label and values that are not web URLs", () => {
    for (const value of ["https://a..example/", "https://a.example../", "pkg:npm/x@1", "not a url"]) {
      expect(canonicalUrl(value), value).toBeUndefined();
    }
  });

  it("is idempotent, also on the spellings it rewrites (case, default port, Unicode labels, the root's dot)", () => {
    fc.assert(
      fc.property(typedWebUrl, ({ typed, plain }) => {
        const once = canonicalUrl(typed);
        expect(once, typed).toBeDefined();
        expect(canonicalUrl(once as string)).toBe(once);
        // The typed spelling names the same address as the plain one.
        expect(once).toBe(canonicalUrl(plain));
      }),
      { numRuns: 300 },
    );
  });

  it("reads an internationalised host back in Unicode, beside its ASCII form", () => {
    expect(unicodeHost("xn--bcher-kva.example")).toBe("bücher.example");
    expect(unicodeHost("xn--pyments-2fg.demo.example")).toBe("pаyments.demo.example");
    expect(unicodeHost(new URL("https://例子.公司/").hostname)).toBe("例子.公司");
    expect(unicodeHost("xn--zz.example")).toBe("xn--zz.example");
    expect(internationalHost("https://xn--bcher-kva.example/v1")).toBe("bücher.example");
    expect(internationalHost("https://api.example.com/v1")).toBeUndefined();
    fc.assert(
      fc.property(fc.stringMatching(/^[a-zäöüéçñßаб-яα-ω一-龥ぁ-ゖ]{1,20}$/u), (label) => {
        const host = new URL(`https://${label}.example/`).hostname;
        expect(unicodeHost(host)).toBe(`${label.normalize("NFC")}.example`);
      }),
      { numRuns: 300 },
    );
  });
});

describe("look-alike hosts", () => {
  it.each([
    ["xn--pyments-2fg.demo.example", "pаyments mixes Latin and Cyrillic letters"],
    ["pаypal.com", "pаypal mixes Latin and Cyrillic letters"],
    ["gοogle.com", "gοogle mixes Latin and Greek letters"],
    ["раура.com", "раура is written in Cyrillic letters that all look Latin"],
  ])("refuses %s", (host, reason) => {
    expect(lookalikeRefusal(new URL(`https://${host}/`).hostname)).toBe(reason);
  });

  it.each([
    "payments.demo.example",
    "bücher.example",
    "münchen-2.example",
    "пример.рф",
    "例子.公司",
    "日本語テキストabc.example",
    "한국abc.example",
    "ελληνικά.example",
  ])("accepts %s", (host) => {
    expect(lookalikeRefusal(new URL(`https://${host}/`).hostname)).toBeUndefined();
  });
});
