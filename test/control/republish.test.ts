import { env } from "cloudflare:workers";
import { snapshotKey } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { type RepublishContext, republishAll } from "../../scripts/deploy/republish.ts";
import { enqueueRepublishPage } from "../../workers/control/src/db/republish.ts";
import { drainOutbox } from "../../workers/control/src/publication/publish.ts";
import { Caller, resolve, uniqueEndpoint } from "../support/api.ts";
import { shardOfOrganisation } from "../support/shards.ts";

/**
 * The republish loop against one shard of this test's local D1 (the command runs it once per
 * shard), the drain running while the loop waits.
 */
function localRepublish(shard: D1Database, overrides: Partial<RepublishContext> = {}) {
  let saved = "";
  const enqueuedIds: string[] = [];
  const log: string[] = [];
  const context: RepublishContext = {
    query: async (sql) => {
      const rows = (await shard.prepare(sql).all<Record<string, unknown>>()).results;
      if (sql.startsWith("INSERT")) enqueuedIds.push(...rows.map((row) => String(row.passport_id)));
      return rows;
    },
    cursor: { read: () => saved, write: (cursor) => (saved = cursor) },
    sleep: async () => {
      await drainOutbox(env);
    },
    log: (line) => log.push(line),
    pageSize: 2,
    lowWater: 0,
    ...overrides,
  };
  return { context, enqueuedIds, log, cursor: () => saved };
}

/** `count` passports of one new organisation, and the shard that holds them. */
async function createPassports(count: number): Promise<{ ids: string[]; shard: D1Database }> {
  const admin = await Caller.create("admin");
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await admin.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] })).identity_id);
  }
  return { ids, shard: await shardOfOrganisation(admin.organisation) };
}

describe("npm run republish", () => {
  it("restores every passport's signed snapshot after a KV loss, through the outbox and its sequencer", async () => {
    const { ids, shard } = await createPassports(5);
    const before = await Promise.all(ids.map((id) => env.SNAPSHOTS.getWithMetadata(snapshotKey(id))));
    await Promise.all(ids.map((id) => env.SNAPSHOTS.delete(snapshotKey(id))));
    expect((await resolve(ids[0] ?? "")).status).toBe(404);

    const run = localRepublish(shard);
    await republishAll(run.context);
    await drainOutbox(env);

    expect([...new Set(run.enqueuedIds)].length).toBe(run.enqueuedIds.length);
    expect(run.enqueuedIds).toEqual(expect.arrayContaining(ids));
    const after = await Promise.all(ids.map((id) => env.SNAPSHOTS.getWithMetadata(snapshotKey(id))));
    expect(after.map((entry) => entry.value)).toEqual(before.map((entry) => entry.value));
    // Same record and version, signed afresh (ES256 signatures differ each time) with the current key.
    const summary = (entry: { metadata: unknown }) => {
      const { digest, record_version, signature } = entry.metadata as Record<string, string>;
      return { digest, record_version, header: signature?.split(".")[0] };
    };
    expect(after.map(summary)).toEqual(before.map(summary));
    expect((await resolve(ids[0] ?? "")).status).toBe(200);
    expect(await shard.prepare("SELECT count(*) AS n FROM outbox").first("n")).toBe(0);
    expect(run.log.at(-1)).toMatch(/^every passport is enqueued/);
  });

  it("resumes after an interruption from the saved cursor without skipping a passport", async () => {
    const { ids, shard } = await createPassports(4);
    let pages = 0;
    const interrupted = localRepublish(shard);
    const failing = {
      ...interrupted.context,
      query: async (sql: string) => {
        if (sql.startsWith("INSERT") && ++pages === 2) throw new Error("connection lost");
        return interrupted.context.query(sql);
      },
    };
    await expect(republishAll(failing)).rejects.toThrow("connection lost");
    const cursor = interrupted.cursor();
    expect(cursor).not.toBe("");

    const resumed = localRepublish(shard, { cursor: { read: () => cursor, write: () => {} } });
    await republishAll(resumed.context);
    expect(resumed.log[0]).toBe(`resuming after ${cursor}`);
    expect(resumed.enqueuedIds.every((id) => id > cursor)).toBe(true);
    expect([...interrupted.enqueuedIds, ...resumed.enqueuedIds]).toEqual(expect.arrayContaining(ids));
  });

  it("waits for the drain before enqueuing the next page", async () => {
    const { shard } = await createPassports(3);
    const steps: string[] = [];
    const run = localRepublish(shard, { lowWater: 1 });
    await republishAll({
      ...run.context,
      query: async (sql) => {
        const rows = await run.context.query(sql);
        // A page is an enqueue that put passports in the outbox; the loop's last, empty one is not.
        // (The shard also holds other tests' passports, so the last page may be a partial one.)
        if (sql.startsWith("INSERT") && rows.length > 0) steps.push("page");
        return rows;
      },
      sleep: async () => {
        steps.push("drain");
        await drainOutbox(env);
      },
    });
    // Pages of two leave a backlog of two, above the low-water mark of one, so a drain comes between pages.
    expect(steps.join(" ")).not.toContain("page page");
    expect(steps).toContain("drain");
  });

  it("refuses a cursor that is not a passport id rather than quoting it into SQL", () => {
    expect(() => enqueueRepublishPage("x' OR 1=1 --", 10)).toThrow("republish cursor is not a passport id");
  });
});
