import { domainToUnicode } from "node:url";

// Everything the CLI prints about a passport (names, binding values, evidence sources, reasons) was
// written by a tenant or served by a resolver. A character that changes how text is shown (an ESC
// sequence or a carriage return that paints a green "OK" over a FAIL line, a right-to-left
// override, an invisible character) never reaches the terminal raw: it is printed as an escape.
// The set is the service's own (`@passport/domain` DISPLAY_UNSAFE, refused on write there); this
// package is published on its own, so it keeps a copy, and a test keeps the two in agreement.

/** C0/C1 controls and DEL, bidirectional controls, line separators, invisible and tag characters. */
export const TERMINAL_UNSAFE =
  /[\p{Cc}\u00AD\u061C\u180E\u200B\u200E\u200F\u2028-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu;

const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, "0");

/**
 * `text` with every unsafe character written as `\u{…}`.
 * @example
 * escapeText("ok\u001b[32m"); // "ok\\u{1B}[32m"
 */
export function escapeText(text: string): string {
  return text.replace(TERMINAL_UNSAFE, (c) => `\\u{${hex(c.codePointAt(0) ?? 0, 2)}}`);
}

/** A copy of `value` whose strings (keys included) are all {@link escapeText}ed, for the text formatters. */
export function escapeStrings<T>(value: T): T {
  if (typeof value === "string") return escapeText(value) as T;
  if (Array.isArray(value)) return value.map(escapeStrings) as T;
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [escapeText(k), escapeStrings(v)])) as T;
  }
  return value;
}

/**
 * `value` as indented JSON in which every unsafe character is a `\uXXXX` escape; JSON.stringify
 * escapes only C0 controls, not DEL, C1 controls or bidirectional ones. Parses to the same value.
 */
export function terminalJson(value: unknown): string {
  // The only raw control left by JSON.stringify is the line feed of its own indentation.
  return JSON.stringify(value, null, 2).replace(TERMINAL_UNSAFE, (c) =>
    c === "\n" ? c : Array.from({ length: c.length }, (_, i) => `\\u${hex(c.charCodeAt(i), 4).toLowerCase()}`).join(""),
  );
}

/**
 * ` (reads as bücher.example)` when `value` is a URL whose host is an internationalised name, so
 * the ASCII form the service stored and checked is shown beside the Unicode one; "" otherwise.
 */
export function readsAs(value: string): string {
  if (!URL.canParse(value)) return "";
  const { hostname } = new URL(value);
  // Node's IDNA ToUnicode; "" for a label that does not decode, which then reads as nothing more.
  const unicode = domainToUnicode(hostname);
  return unicode && unicode !== hostname ? ` (host reads as ${escapeText(unicode)})` : "";
}
