import type { Database } from "../db/client.ts";
import { type EventRow, historyPageReads } from "../db/history-archive.ts";
import type { ArchivedPart } from "./archive.ts";

/** `a` and `b`, each in `seq` order, merged in `seq` order. */
function merged(a: EventRow[], b: EventRow[]): EventRow[] {
  return [...a, ...b].sort((x, y) => x.seq - y.seq);
}

/**
 * Up to `count` of a passport's history events after event sequence `afterSeq`, oldest first, from
 * wherever each one is (docs/storage.md, "History archive"): D1, and the sealed archive parts in KV
 * for what has left D1. One D1 round trip reads both; a part is fetched from KV only when it holds
 * events that come before the `count`-th one found so far, so a page of recent history costs no KV
 * read and a page of old history one or two. The answer is the same before and after archiving.
 */
export async function historyEvents(
  env: Env,
  db: Database,
  passportId: string,
  afterSeq: number,
  count: number,
): Promise<EventRow[]> {
  const { parts, recent } = await historyPageReads(db, passportId, afterSeq, count);
  let rows = recent;
  for (const part of parts) {
    const last = rows[count - 1];
    if (last && part.firstSeq > last.seq) break;
    const value = await env.SNAPSHOTS.get<ArchivedPart>(part.key, "json");
    // A sealed part's rows are no longer in D1: answering without them would be a gap, not history.
    if (!value) throw new Error(`history archive part ${part.key} is not in KV`);
    rows = merged(
      rows,
      value.events.filter((e) => e.seq > afterSeq),
    ).slice(0, count);
  }
  return rows;
}
