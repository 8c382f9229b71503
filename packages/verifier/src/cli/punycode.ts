// RFC 3492 (punycode) decoding, to show an internationalised host as people read it beside the
// ASCII form the service stored and checked. The same few lines as `unicodeHost` in
// `@passport/domain` (this package is published on its own and does not pull it); a test keeps the
// two in agreement.
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
