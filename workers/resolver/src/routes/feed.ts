import { FEED_PAGE_SIZE, problem } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS, problemAnswer } from "../http.ts";
import { readFeed } from "../proof-lists.ts";
import { UNAVAILABLE_DETAIL } from "../published-snapshots.ts";
import { wholeNumber } from "../query.ts";

/** Sequence numbers are transparency-log indexes plus one; 15 digits keep them exact in a JavaScript number. */
const MAX_SEQ = 999_999_999_999_999;
const FEED_HEADERS = { ...CORS_HEADERS, ...cacheHeaders("short"), "content-type": "application/json; charset=utf-8" };

export const feed = new Hono<{ Bindings: Env }>();

/**
 * `GET {base}/api/feed.json?after={seq}&limit={n}`: every publication with `seq > after` (default
 * 0), in order, at most `limit` (default and maximum 100): identity id, record version, digest and
 * time, nothing the records do not show. `next` is always present: the address to read (or poll)
 * for what follows.
 */
feed.get("/feed.json", async (c) => {
  const after = wholeNumber(c.req.query("after"), 0, 0, MAX_SEQ);
  const limit = wholeNumber(c.req.query("limit"), FEED_PAGE_SIZE, 1, FEED_PAGE_SIZE);
  if (after === null || limit === null) {
    return problemAnswer(
      problem("invalid-request", {
        detail: `after must be a feed sequence number (a whole number, 0 for the start) and limit a whole number from 1 to ${FEED_PAGE_SIZE}.`,
      }),
      cacheHeaders("stable"),
    );
  }
  try {
    const page = await readFeed(c.env.SNAPSHOTS, after, limit);
    const next = page.entries.at(-1)?.seq ?? after;
    const body = {
      entries: page.entries,
      more: page.more,
      next: `${c.env.PUBLIC_BASE_URL}/api/feed.json?after=${next}&limit=${limit}`,
    };
    return new Response(JSON.stringify(body), { headers: FEED_HEADERS });
  } catch (error) {
    console.error(JSON.stringify({ level: "error", event: "feed_read_failed", message: String(error) }));
    return problemAnswer(problem("unavailable", { detail: UNAVAILABLE_DETAIL }), {
      ...cacheHeaders("none"),
      "retry-after": "5",
    });
  }
});
