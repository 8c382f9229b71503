import { identityIdDefect, LOG_CHECKPOINT_KEY, logLatestKey, logTileKey, problem } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS, malformedIdAnswer, problemAnswer } from "../http.ts";
import { UNAVAILABLE_DETAIL } from "../published-snapshots.ts";

/**
 * The transparency log, read-only from KV (docs/transparency-log.md): the signed checkpoint, the
 * log's verifier key, C2SP tlog-tiles hash tiles and entry bundles, and per passport the index of
 * its newest entry. The control plane's TransparencyLog object writes all of it.
 */
export const log = new Hono<{ Bindings: Env }>();

/** Tiles that are full never change: cached for good, by browsers and the edge alike. */
const IMMUTABLE = { "cache-control": "public, max-age=31536000, immutable" };
/** The checkpoint, partial tiles and hints change with the next append. */
const SHORT = { "cache-control": "public, max-age=5" };

// tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>]; N in groups of three digits, all but the last
// prefixed with "x" (C2SP tlog-tiles). Only canonical paths were ever written, so any other
// well-shaped path is simply not found; the shape check keeps arbitrary text out of KV keys.
const TILE_PATH =
  /^(tile\/(entries|[0-9]|[1-5][0-9]|6[0-3])\/(?:x[0-9]{3}\/){0,5}[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/;
const TILE_WIDTH = 256;
const HASH_SIZE = 32;

/**
 * The first `width` hashes (or entries) of a stored tile, or undefined when it holds fewer. KV keeps
 * one key per tile with its widest version (docs/storage.md); a narrower partial tile is its prefix.
 */
function prefix(tile: Uint8Array, entries: boolean, width: number): Uint8Array | undefined {
  if (!entries) return tile.length >= width * HASH_SIZE ? tile.subarray(0, width * HASH_SIZE) : undefined;
  let at = 0;
  for (let n = 0; n < width; n++) {
    if (at + 2 > tile.length) return undefined;
    at += 2 + ((tile[at] as number) << 8) + (tile[at + 1] as number);
  }
  return at <= tile.length ? tile.subarray(0, at) : undefined;
}

function notFound(detail: string): Response {
  return problemAnswer(problem("log-not-found", { detail }), SHORT);
}

function unavailable(error: unknown): Response {
  console.error(JSON.stringify({ level: "error", event: "log_read_failed", message: String(error) }));
  return problemAnswer(problem("unavailable", { detail: UNAVAILABLE_DETAIL }), {
    ...cacheHeaders("none"),
    "retry-after": "5",
  });
}

log.get("/checkpoint", async (c) => {
  let checkpoint: string | null;
  try {
    checkpoint = await c.env.SNAPSHOTS.get(LOG_CHECKPOINT_KEY, "text");
  } catch (error) {
    return unavailable(error);
  }
  if (checkpoint === null) return notFound("The log has no checkpoint yet: nothing was published.");
  return new Response(checkpoint, {
    headers: { ...CORS_HEADERS, ...SHORT, "content-type": "text/plain; charset=utf-8" },
  });
});

log.get("/key", (c) => {
  const key = c.env.LOG_VERIFIER_KEY;
  if (!key) return notFound("This resolver serves no transparency log key.");
  return new Response(`${key}\n`, {
    headers: { ...CORS_HEADERS, ...cacheHeaders("stable"), "content-type": "text/plain; charset=utf-8" },
  });
});

log.get("/tile/*", async (c) => {
  const shape = TILE_PATH.exec(c.req.path.slice("/log/".length));
  const [, stored, level, partialWidth] = shape ?? [];
  const width = partialWidth === undefined ? TILE_WIDTH : Number(partialWidth);
  if (!stored || width > TILE_WIDTH - (partialWidth === undefined ? 0 : 1)) {
    return notFound("No such tile: see C2SP tlog-tiles for the paths.");
  }
  let tile: ArrayBuffer | null;
  try {
    tile = await c.env.SNAPSHOTS.get(logTileKey(stored), "arrayBuffer");
  } catch (error) {
    return unavailable(error);
  }
  const bytes = tile === null ? undefined : prefix(new Uint8Array(tile), level === "entries", width);
  // A full tile must hold exactly 256; a partial one is a prefix of whatever the tile holds now.
  const whole = partialWidth !== undefined || bytes?.length === tile?.byteLength;
  if (!bytes || !whole) return notFound("The log has no such tile (yet).");
  return new Response(bytes, {
    headers: {
      ...CORS_HEADERS,
      ...(partialWidth === undefined ? IMMUTABLE : SHORT),
      "content-type": "application/octet-stream",
    },
  });
});

log.get("/latest/:id", async (c) => {
  const identityId = c.req.param("id");
  const defect = identityIdDefect(identityId);
  if (defect) {
    return malformedIdAnswer(defect);
  }
  let latest: string | null;
  try {
    latest = await c.env.SNAPSHOTS.get(logLatestKey(identityId), "text");
  } catch (error) {
    return unavailable(error);
  }
  if (latest === null) return notFound("The log has no entry for this identity id.");
  return new Response(latest, { headers: { ...CORS_HEADERS, ...SHORT, "content-type": "application/json" } });
});
