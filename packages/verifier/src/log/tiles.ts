/**
 * C2SP tlog-tiles paths: tiles of height 8 (256 hashes or entries wide), addressed as
 * `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]` under the log's prefix.
 */

const TILE_HEIGHT = 8;
const TILE_WIDTH = 2 ** TILE_HEIGHT;

/** N as path elements of three decimal digits, all but the last prefixed with "x" (1234067 → x001/x234/067). */
export function tileIndexPath(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`tile index ${n} is not a non-negative integer`);
  const groups: string[] = [];
  let rest = n;
  do {
    groups.unshift(String(rest % 1000).padStart(3, "0"));
    rest = Math.floor(rest / 1000);
  } while (rest > 0);
  return groups.map((group, i) => (i < groups.length - 1 ? `x${group}` : group)).join("/");
}

function widthSuffix(width: number): string {
  if (!Number.isSafeInteger(width) || width < 1 || width > TILE_WIDTH) {
    throw new RangeError(`tile width ${width} is outside 1..${TILE_WIDTH}`);
  }
  return width === TILE_WIDTH ? "" : `.p/${width}`;
}

/** Path of the hash tile at level `level`, index `n`, holding `width` hashes (256 = full). */
export function hashTilePath(level: number, n: number, width: number = TILE_WIDTH): string {
  if (!Number.isSafeInteger(level) || level < 0 || level > 63) throw new RangeError(`tile level ${level} is invalid`);
  return `tile/${level}/${tileIndexPath(n)}${widthSuffix(width)}`;
}

/** Path of the entry bundle `n` holding `width` entries (256 = full). */
export function entryTilePath(n: number, width: number = TILE_WIDTH): string {
  return `tile/entries/${tileIndexPath(n)}${widthSuffix(width)}`;
}
