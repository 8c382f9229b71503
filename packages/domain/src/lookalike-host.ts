import { unicodeHost } from "./canonical-url.ts";

// Look-alike host names (docs/canonical-urls.md): a label that mixes scripts, such as `pаyments`
// with a Cyrillic `а`, or one written wholly in Cyrillic or Greek letters that all look Latin, can
// pass for another name. UTS #39's "highly restrictive" level is checked per label with the
// engine's own Unicode script data (regular expression property escapes), so no table is shipped.
// Only the control plane imports this module.

/** The scripts that may share a label under UTS #39 "highly restrictive": CJK with Latin. */
const ALLOWED_MIXES: readonly (readonly string[])[] = [
  ["Latin", "Han", "Hiragana", "Katakana"],
  ["Latin", "Han", "Bopomofo"],
  ["Latin", "Han", "Hangul"],
];

const SCRIPTS: readonly [string, RegExp][] = [
  "Latin",
  "Cyrillic",
  "Greek",
  "Armenian",
  "Hebrew",
  "Arabic",
  "Devanagari",
  "Bengali",
  "Thai",
  "Georgian",
  "Cherokee",
  "Han",
  "Hiragana",
  "Katakana",
  "Hangul",
  "Bopomofo",
].map((script) => [script, new RegExp(`^\\p{Script_Extensions=${script}}$`, "u")]);
const COMMON = /^[\p{Script=Common}\p{Script=Inherited}]$/u;

/** Cyrillic and Greek lower-case letters that read as Latin ones (from Unicode's confusables). */
const LATIN_LOOKALIKES = /^[аеорсухѕіјԁԛԝһӏүкпгьъαβεικνορτυχ]+$/u;

function scriptsOf(label: string): Set<string> {
  const found = new Set<string>();
  for (const character of label) {
    if (COMMON.test(character)) continue;
    const scripts = SCRIPTS.filter(([, pattern]) => pattern.test(character)).map(([name]) => name);
    // A letter of a script not listed counts as a script of its own.
    for (const script of scripts.length > 0 ? scripts : [`U+${character.codePointAt(0)?.toString(16)}`]) {
      found.add(script);
    }
  }
  return found;
}

/**
 * Why `host` (ASCII or Unicode) could pass for another name, or undefined when it cannot: a label
 * mixing scripts beyond the CJK combinations UTS #39 allows, or a label wholly of Cyrillic or Greek
 * letters that all look Latin under an ASCII top-level domain.
 * @example
 * lookalikeRefusal("xn--pyments-2fg.demo.example"); // "pаyments mixes Latin and Cyrillic letters"
 */
export function lookalikeRefusal(host: string): string | undefined {
  const labels = unicodeHost(host).split(".");
  const asciiTld = /^[\x21-\x7e]*$/.test(labels.at(-1) ?? "");
  for (const label of labels) {
    const scripts = [...scriptsOf(label)];
    if (scripts.length > 1 && !ALLOWED_MIXES.some((mix) => scripts.every((s) => mix.includes(s)))) {
      return `${label} mixes ${scripts.slice(0, -1).join(", ")} and ${scripts.at(-1)} letters`;
    }
    if (asciiTld && scripts.length === 1 && LATIN_LOOKALIKES.test(label.replace(/[-\d]/g, ""))) {
      return `${label} is written in ${scripts[0]} letters that all look Latin`;
    }
  }
  return undefined;
}
