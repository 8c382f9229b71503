import { describe, expect, it } from "vitest";
import { Caller } from "../support/api.ts";
import { json, serve, uniqueHost } from "../support/hosts.ts";
import { shardOfOrganisation } from "../support/shards.ts";

// What one passport and one record version cost in D1 (docs/storage.md, "Bytes per passport and per
// version"). D1 reports the database's size after each statement (`meta.size_after`, what its 10 GB
// limit counts: pages in use and free), so the figures are the growth of that number while the
// service writes through its own API. Local D1 refuses `PRAGMA page_count` and has no `dbstat`; the
// split by table is the size of a copy of each table and of its indexes, made and dropped here.

const PASSPORTS = 100;

/** The shard that holds the measured organisation's rows (docs/sharding.md). */
let measured: D1Database;
const CHANGES_PER_PASSPORT = 3;

async function databaseSize(): Promise<number> {
  const { meta } = await measured.prepare("SELECT 1").run();
  return Number(meta.size_after);
}

async function rows(table: string): Promise<number> {
  return (await measured.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>())?.n ?? 0;
}

/** Runs `work` over `items`, `width` at a time. */
async function inTurns<T>(items: T[], width: number, work: (item: T) => Promise<unknown>) {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
}

/** The bytes a copy of `table`'s rows takes, and a copy of each of `indexes` ([columns, unique]) on it. */
async function tableBytes(table: string, indexes: [string, boolean][]) {
  const before = await databaseSize();
  await measured.prepare(`CREATE TABLE measured_copy AS SELECT * FROM ${table}`).run();
  const data = (await databaseSize()) - before;
  const indexBytes: number[] = [];
  for (const [i, [columns, unique]] of indexes.entries()) {
    const at = await databaseSize();
    await measured
      .prepare(`CREATE ${unique ? "UNIQUE " : ""}INDEX measured_copy_${i} ON measured_copy (${columns})`)
      .run();
    indexBytes.push((await databaseSize()) - at);
  }
  await measured.prepare("DROP TABLE measured_copy").run();
  return { rows: await rows(table), data, indexes: indexBytes };
}

describe("bytes in D1", () => {
  it("per passport, per record version, and nothing for a held renewal", { timeout: 240_000 }, async () => {
    // One member per passport, so the per-subject rate limits (docs/limits.md) never refuse a write.
    const first = await Caller.create("editor");
    measured = await shardOfOrganisation(first.organisation);
    const callers = [first];
    for (let i = 1; i < PASSPORTS; i++) callers.push(await Caller.create("editor", first.organisation));
    const start = await databaseSize();

    // Agent passports with a display name and a manifest binding at a host of their own.
    const created: { id: string; bindingId: string; caller: Caller }[] = [];
    await inTurns([...Array(PASSPORTS).keys()], 5, async (i) => {
      const caller = callers[i] as Caller;
      const host = uniqueHost("agent");
      const passport = await caller.createPassport({
        family: "agent",
        display_name: `Billing agent ${i}`,
        bindings: [{ class: "manifest", value: `https://${host}/card.json` }],
      });
      await serve(host, { "/card.json": json({ passport: passport.identity_id }) });
      created.push({ id: passport.identity_id, bindingId: passport.bindings[0].id, caller });
    });
    const afterCreate = await databaseSize();

    // Each binding verified: the passport's second version, with observed evidence.
    await inTurns(created, 5, ({ id, bindingId, caller }) =>
      caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`),
    );
    const afterVerify = await databaseSize();

    // Plain changes: a new display name, CHANGES_PER_PASSPORT times each.
    for (let round = 0; round < CHANGES_PER_PASSPORT; round++) {
      await inTurns(created, 5, ({ id, caller }) =>
        caller.json("PATCH", `/v1/passports/${id}`, { display_name: `Billing agent ${id} r${round}` }),
      );
    }
    const afterChanges = await databaseSize();

    // A member's check of every fresh proof again: held renewals.
    const events = await rows("events");
    const publications = await rows("publications");
    await inTurns(created, 5, ({ id, bindingId, caller }) =>
      caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`),
    );
    const afterHeld = await databaseSize();
    expect(await rows("events")).toBe(events);
    expect(await rows("publications")).toBe(publications);

    const figures = {
      page_size: 4096,
      passports: PASSPORTS,
      per_created_passport: Math.round((afterCreate - start) / PASSPORTS),
      per_verification_version: Math.round((afterVerify - afterCreate) / PASSPORTS),
      per_change_version: Math.round((afterChanges - afterVerify) / (PASSPORTS * CHANGES_PER_PASSPORT)),
      per_held_renewal: Math.round((afterHeld - afterChanges) / PASSPORTS),
      per_passport_with_five_versions: Math.round((afterChanges - start) / PASSPORTS),
      tables: {
        events: await tableBytes("events", [["passport_id, record_version", true]]),
        publications: await tableBytes("publications", [
          ["passport_id, record_version", true],
          ["passport_id, previous_digest", true],
        ]),
        evidence: await tableBytes("evidence", [["passport_id", false]]),
      },
    };
    console.log(JSON.stringify({ event: "d1_bytes", ...figures }));

    // A version costs bytes, not pages: well under a page each, and a held renewal next to nothing.
    expect(figures.per_change_version).toBeGreaterThan(100);
    expect(figures.per_change_version).toBeLessThan(4096);
    expect(figures.per_held_renewal).toBeLessThan(figures.per_change_version / 4);
  });
});
