// Characters that change how text is shown rather than what it says. Tenant text (names, binding
// values and labels, evidence, reasons) carrying one could make a page or a terminal show
// something else: an ESC sequence or a carriage return can paint a green "OK" over a FAIL line, a
// right-to-left override reverses what follows, a zero-width or tag character hides text. They are
// refused on write (docs/canonical-urls.md). This module stays free of zod: the resolver imports it.

/**
 * C0 and C1 controls and DEL (line breaks and tabs included), bidirectional marks, embeddings,
 * overrides and isolates, line and paragraph separators, invisible zero-width characters and
 * operators, the byte-order mark, and tag characters. Zero-width joiners and non-joiners stay
 * allowed: scripts and emoji need them.
 */
export const DISPLAY_UNSAFE =
  /[\p{Cc}\u00AD\u061C\u180E\u200B\u200E\u200F\u2028-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/u;

/** The first character of `text` that changes how it is shown, as `U+XXXX`, or undefined. */
function displayUnsafeCharacter(text: string): string | undefined {
  const found = DISPLAY_UNSAFE.exec(text)?.[0];
  return found === undefined ? undefined : codePointName(found);
}

function codePointName(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Why `text` is refused as tenant text, or undefined when it may be stored and shown. */
export function displayTextRefusal(text: string): string | undefined {
  const unsafe = displayUnsafeCharacter(text);
  return unsafe
    ? `contains ${unsafe}, a control, bidirectional or invisible character that changes how text is shown`
    : undefined;
}
