/**
 * An optional whole-number query parameter: `fallback` when absent, null when it is not a plain
 * decimal integer within [min, max] (no sign, exponent, fraction or leading spaces).
 * @example
 * wholeNumber("25", 100, 1, 100); // 25
 * wholeNumber("1e3", 100, 1, 100); // null
 */
export function wholeNumber(value: string | undefined, fallback: number, min: number, max: number): number | null {
  if (value === undefined) return fallback;
  if (!/^\d{1,15}$/.test(value)) return null;
  const n = Number(value);
  return n >= min && n <= max ? n : null;
}
