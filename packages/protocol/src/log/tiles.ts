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

const HASH_SIZE = 32;

/**
 * Every hash tile of a tree of the given leaf hashes, keyed by path: at level L the hashes of the
 * complete subtrees of 256^L leaves, 256 to a tile; the rightmost tile of a level is partial.
 */
export async function hashTiles(
  leaves: readonly Uint8Array[],
  subtreeRoot: (leaves: readonly Uint8Array[]) => Promise<Uint8Array>,
): Promise<Map<string, Uint8Array>> {
  const tiles = new Map<string, Uint8Array>();
  for (let level = 0; ; level++) {
    const span = TILE_WIDTH ** level;
    const count = Math.floor(leaves.length / span);
    if (count === 0) break;
    for (let n = 0; n * TILE_WIDTH < count; n++) {
      const width = Math.min(TILE_WIDTH, count - n * TILE_WIDTH);
      const tile = new Uint8Array(width * HASH_SIZE);
      for (let i = 0; i < width; i++) {
        const start = (n * TILE_WIDTH + i) * span;
        tile.set(await subtreeRoot(leaves.slice(start, start + span)), i * HASH_SIZE);
      }
      tiles.set(hashTilePath(level, n, width), tile);
    }
  }
  return tiles;
}

/** The leaf hashes held by level-0 tiles read in order, or undefined when a tile is not whole hashes. */
export function leafHashesFromTiles(tiles: readonly Uint8Array[]): Uint8Array[] | undefined {
  const leaves: Uint8Array[] = [];
  for (const tile of tiles) {
    if (tile.length === 0 || tile.length % HASH_SIZE !== 0 || tile.length > TILE_WIDTH * HASH_SIZE) return undefined;
    for (let at = 0; at < tile.length; at += HASH_SIZE) leaves.push(tile.slice(at, at + HASH_SIZE));
  }
  return leaves;
}
