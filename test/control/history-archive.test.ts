import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { archiveHistory, HISTORY_ARCHIVE } from "../../workers/control/src/history/archive.ts";
import { type Body, Caller } from "../support/api.ts";
import { inEveryShard, shardOfIdentity } from "../support/shards.ts";

// History older than the window leaves D1 for KV (docs/storage.md, "History archive"), and the
// API's history pages stay exactly what they were.

const DAY = 86_400_000;
/** Small parts, so one history spans several. */
const LIMITS = { ...HISTORY_ARCHIVE, partEvents: 4 };

/** Every page of a passport's history at `limit` a page, following `next_after`, and the pages as answered. */
async function allPages(caller: Caller, id: string, limit: number): Promise<Body[]> {
  const pages: Body[] = [];
  let after: number | null = 0;
  while (after !== null) {
    const page: Body = await caller.json("GET", `/v1/passports/${id}/history?limit=${limit}&after=${after}`);
    pages.push(page);
    after = page.next_after;
  }
  return pages;
}

async function history(caller: Caller, id: string) {
  return {
    byThree: await allPages(caller, id, 3),
    whole: await caller.json("GET", `/v1/passports/${id}/history?limit=500`),
  };
}

/** One archiving pass as the cron runs it: every shard in turn, the counts summed. */
async function archiveEverywhere(
  environment: Env,
  at: Date,
  limits: Parameters<typeof archiveHistory>[3],
): Promise<{ sealed: number; written: number }> {
  const runs = await inEveryShard((db) => archiveHistory(environment, db, at, limits));
  return runs.reduce((sum, run) => ({ sealed: sum.sealed + run.sealed, written: sum.written + run.written }), {
    sealed: 0,
    written: 0,
  });
}

async function count(table: string, id: string): Promise<number> {
  const row = await (await shardOfIdentity(id))
    .prepare(`SELECT count(*) AS n FROM ${table} WHERE passport_id = ?`)
    .bind(id)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

async function parts(id: string) {
  const { results } = await (await shardOfIdentity(id))
    .prepare("SELECT first_seq, last_seq, sealed_at FROM history_archives WHERE passport_id = ? ORDER BY first_seq")
    .bind(id)
    .all<{ first_seq: number; last_seq: number; sealed_at: string | null }>();
  return results;
}

/** A passport with `changes` changes after its creation, all published. */
async function changedPassport(caller: Caller, changes: number): Promise<string> {
  const passport = await caller.createPassport({ family: "agent", display_name: "Archived 0" });
  const id = passport.identity_id as string;
  for (let i = 1; i <= changes; i++)
    await caller.json("PATCH", `/v1/passports/${id}`, { display_name: `Archived ${i}` });
  return id;
}

/** Runs the archive a minute apart from `start` until a run neither seals nor writes anything. */
async function archiveUntilDone(start: Date, limits = LIMITS) {
  let at = start;
  for (let run = 0; run < 50; run++) {
    const done = await archiveEverywhere(env, at, limits);
    if (done.sealed === 0 && done.written === 0) return at;
    at = new Date(at.getTime() + 2 * 60_000);
  }
  throw new Error("the archive did not settle");
}

describe("history archive", () => {
  it("moves a passport's old history out of D1, and the history pages are the same before, during and after", async () => {
    const caller = await Caller.create("editor");
    const id = await changedPassport(caller, 12);
    const before = await history(caller, id);
    expect(before.whole.items).toHaveLength(13);

    // Inside the window nothing moves.
    expect(await archiveEverywhere(env, new Date(Date.now() + DAY), LIMITS)).toEqual({
      sealed: 0,
      written: 0,
    });
    expect(await parts(id)).toEqual([]);

    // Past it: the first run writes a part to KV, and D1 still holds every row until the part is sealed.
    const later = new Date(Date.now() + HISTORY_ARCHIVE.windowMs + DAY);
    await archiveEverywhere(env, later, LIMITS);
    expect(await parts(id)).toMatchObject([{ sealed_at: null }]);
    expect(await count("events", id)).toBe(13);
    expect(await history(caller, id)).toEqual(before);

    await archiveUntilDone(new Date(later.getTime() + 2 * 60_000));
    // Everything but the newest event and publication left D1, in sealed parts of at most four events.
    const sealed = await parts(id);
    expect(sealed.map((p) => [p.last_seq - p.first_seq < 4, p.sealed_at !== null])).toEqual([
      [true, true],
      [true, true],
      [true, true],
    ]);
    expect(await count("events", id)).toBe(1);
    expect(await count("publications", id)).toBe(1);
    expect(await history(caller, id)).toEqual(before);

    // A change after the archive continues the same history.
    await caller.json("PATCH", `/v1/passports/${id}`, { display_name: "After the archive" });
    const after = await history(caller, id);
    expect(after.whole.items.slice(0, 13)).toEqual(before.whole.items);
    expect(after.whole.items.map((e: Body) => e.record_version)).toEqual([...Array(14).keys()].map((v) => v + 1));
  });

  it("keeps what is not yet published: a passport whose newest versions are still owed", async () => {
    const caller = await Caller.create("editor");
    const id = await changedPassport(caller, 3);
    // The last two publications are not yet in the log (as after a failed append).
    await (await shardOfIdentity(id))
      .prepare("UPDATE publications SET log_index = NULL WHERE passport_id = ? AND record_version >= 3")
      .bind(id)
      .run();
    const before = await history(caller, id);
    await archiveUntilDone(new Date(Date.now() + HISTORY_ARCHIVE.windowMs + DAY));
    // Versions 1 and 2 left; the events of versions 3 and 4 and their publications stay.
    expect(await count("events", id)).toBe(2);
    expect(await count("publications", id)).toBe(2);
    expect(await history(caller, id)).toEqual(before);
  });

  it("an interrupted run is resumed without loss or duplicate", async () => {
    const caller = await Caller.create("editor");
    const id = await changedPassport(caller, 9);
    const before = await history(caller, id);
    const later = new Date(Date.now() + HISTORY_ARCHIVE.windowMs + DAY);

    // Interrupted after the part is in KV and before it is recorded: nothing is recorded, D1 keeps it all.
    const interrupted = {
      ...env,
      SNAPSHOTS: {
        ...env.SNAPSHOTS,
        put: async (key: string, value: string) => {
          await env.SNAPSHOTS.put(key, value);
          throw new Error("interrupted");
        },
      },
    } as Env;
    await expect(archiveEverywhere(interrupted, later, LIMITS)).rejects.toThrow("interrupted");
    expect(await parts(id)).toEqual([]);
    expect(await history(caller, id)).toEqual(before);

    // Two runs at once (a slow run meeting the next), then the rest: each event ends in one place.
    await Promise.all([archiveEverywhere(env, later, LIMITS), archiveEverywhere(env, later, LIMITS)]);
    await archiveUntilDone(new Date(later.getTime() + 2 * 60_000));
    const sealed = await parts(id);
    for (const [i, part] of sealed.entries()) {
      expect(part.sealed_at).not.toBeNull();
      if (i > 0) expect(part.first_seq).toBeGreaterThan(sealed[i - 1]?.last_seq ?? 0);
    }
    expect(await count("events", id)).toBe(1);
    expect(await history(caller, id)).toEqual(before);
  });
});
