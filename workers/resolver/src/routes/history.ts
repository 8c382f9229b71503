import { identityIdDefect, problem } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS, malformedIdAnswer, problemAnswer } from "../http.ts";
import { listFirstHistoryBlock, readHistory } from "../proof-lists.ts";
import { lookUp, NOT_FOUND_DETAIL, UNAVAILABLE_DETAIL } from "../published-snapshots.ts";
import { wholeNumber } from "../query.ts";

/** Record versions are positive 32-bit integers in D1; `after` is a version, so it stays below that. */
const MAX_VERSION = 2 ** 31 - 1;
const HISTORY_DEFAULT_LIMIT = 100;
const HISTORY_MAX_LIMIT = 1000;

export const history = new Hono<{ Bindings: Env }>();

/**
 * `GET {base}/api/p/{identity_id}/history.json?after={version}&limit={n}`: the passport's signed
 * history entries with `record_version > after` (default 0), oldest first, at most `limit`
 * (default 100, at most 1000), and `next` when more follow. Retired passports keep their history.
 */
history.get("/:id/history.json", async (c) => {
  const identityId = c.req.param("id");
  const defect = identityIdDefect(identityId);
  if (defect) {
    return malformedIdAnswer(defect);
  }
  const after = wholeNumber(c.req.query("after"), 0, 0, MAX_VERSION);
  const limit = wholeNumber(c.req.query("limit"), HISTORY_DEFAULT_LIMIT, 1, HISTORY_MAX_LIMIT);
  if (after === null || limit === null) {
    return problemAnswer(
      problem("invalid-request", {
        detail: `after must be a record version (a whole number, 0 for the start) and limit a whole number from 1 to ${HISTORY_MAX_LIMIT}.`,
      }),
      cacheHeaders("stable"),
    );
  }
  const unavailable = () =>
    problemAnswer(problem("unavailable", { detail: UNAVAILABLE_DETAIL }), {
      ...cacheHeaders("none"),
      "retry-after": "5",
    });
  try {
    const [found, first] = await Promise.all([
      lookUp(c.env.SNAPSHOTS, identityId),
      listFirstHistoryBlock(c.env.SNAPSHOTS, identityId, after),
    ]);
    if (found.kind === "unavailable") return unavailable();
    if (found.kind === "unknown") {
      return problemAnswer(
        problem("identity-not-found", { detail: NOT_FOUND_DETAIL }),
        cacheHeaders("identity", identityId),
      );
    }
    const current = found.snapshot.metadata?.record_version;
    const page = await readHistory(c.env.SNAPSHOTS, identityId, after, limit, current, first);
    const last = page.entries.at(-1);
    const body = {
      identity_id: identityId,
      entries: page.entries,
      ...(page.more && last
        ? {
            next: `${c.env.PUBLIC_BASE_URL}/api/p/${identityId}/history.json?after=${last.record_version}&limit=${limit}`,
          }
        : {}),
    };
    // A full page of contiguous versions is settled: no later publication changes it.
    const settled =
      page.more && page.entries.length === limit && page.entries.every((e, i) => e.record_version === after + 1 + i);
    return new Response(JSON.stringify(body), {
      headers: {
        ...CORS_HEADERS,
        ...cacheHeaders(settled ? "settled" : "identity", identityId),
        "content-type": "application/json; charset=utf-8",
      },
    });
  } catch (error) {
    console.error(JSON.stringify({ level: "error", event: "history_read_failed", message: String(error) }));
    return unavailable();
  }
});
