import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SECOND_PURGE_DELAY_MS } from "../../workers/control/src/publication/sequencer.ts";
import { Caller } from "../support/api.ts";
import { withSequencerEnv } from "../support/publication-sequencer.ts";

/** Stands in for the resolver's `ResolverAdmin.purge` (the edge cache is not emulated locally). */
function recordingResolver(fail = false) {
  const purged: string[] = [];
  const resolver = {
    purge: async (identityId: string) => {
      if (fail) throw new Error("purge refused (1134: rate limited)");
      purged.push(identityId);
    },
  } as unknown as Env["RESOLVER"];
  return { resolver, purged };
}

const sequencer = (id: string) => env.PUBLICATION_SEQUENCER.getByName(id);

function alarmOf(id: string): Promise<number | null> {
  return runInDurableObject(sequencer(id), (_instance, state) => state.storage.getAlarm());
}

/** Moves the sequencer's pending due time (and alarm) into the past, as if K had passed. */
function letTimePass(id: string): Promise<void> {
  return runInDurableObject(sequencer(id), async (_instance, state) => {
    const pending = await state.storage.get<{ identityId: string; dueAt: number }>("second-purge");
    if (pending) await state.storage.put("second-purge", { ...pending, dueAt: Date.now() - 1 });
    await state.storage.setAlarm(Date.now() - 1);
  });
}

describe("the second purge, K after a publication (docs/freshness.md)", () => {
  it("purges the identity at publication and again once K has passed, from the sequencer's alarm", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    const { resolver, purged } = recordingResolver();
    await withSequencerEnv(id, { RESOLVER: resolver }, async () => {
      const before = Date.now();
      await admin.json("PATCH", `/v1/passports/${id}`, { display_name: "Renamed" });
      expect(purged).toEqual([id]);
      const alarm = await alarmOf(id);
      expect(alarm).not.toBeNull();
      // K after the publication (workerd's clock moves only with I/O, hence a second's leeway).
      expect(alarm).toBeGreaterThanOrEqual(before + SECOND_PURGE_DELAY_MS - 1000);
      expect(alarm).toBeLessThanOrEqual(Date.now() + SECOND_PURGE_DELAY_MS + 1000);

      await letTimePass(id);
      expect(await runDurableObjectAlarm(sequencer(id))).toBe(true);
      expect(purged).toEqual([id, id]);
      // Done: nothing is left pending, and no further purge runs.
      expect(await alarmOf(id)).toBeNull();
      expect(await runDurableObjectAlarm(sequencer(id))).toBe(false);
      expect(purged).toEqual([id, id]);
    });
  });

  it("coalesces a burst of publications into one alarm, and purges once more for the newest", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    const { resolver, purged } = recordingResolver();
    await withSequencerEnv(id, { RESOLVER: resolver }, async () => {
      await admin.json("PATCH", `/v1/passports/${id}`, { display_name: "One" });
      const first = await alarmOf(id);
      await admin.json("PATCH", `/v1/passports/${id}`, { display_name: "Two" });
      await admin.json("PATCH", `/v1/passports/${id}`, { display_name: "Three" });
      // Three publications, three first purges, one alarm: the first one's, not moved.
      expect(purged).toEqual([id, id, id]);
      expect(await alarmOf(id)).toBe(first);

      // The alarm fires K after the first publication: it purges, and because the later ones are
      // not K old yet, sets itself again for the newest one's due time.
      await runInDurableObject(sequencer(id), (_instance, state) => state.storage.setAlarm(Date.now() - 1));
      expect(await runDurableObjectAlarm(sequencer(id))).toBe(true);
      expect(purged).toHaveLength(4);
      const again = await alarmOf(id);
      expect(again).toBeGreaterThan(Date.now());

      await letTimePass(id);
      expect(await runDurableObjectAlarm(sequencer(id))).toBe(true);
      expect(purged).toHaveLength(5);
      expect(await alarmOf(id)).toBeNull();
    });
  });

  it("keeps the second purge owed when the resolver refuses it, so the platform's alarm retry runs it", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    await withSequencerEnv(id, { RESOLVER: recordingResolver().resolver }, () =>
      admin.json("PATCH", `/v1/passports/${id}`, { display_name: "Renamed" }),
    );
    await letTimePass(id);
    await withSequencerEnv(id, { RESOLVER: recordingResolver(true).resolver }, async () => {
      await expect(runDurableObjectAlarm(sequencer(id))).rejects.toThrow(/purge refused/);
    });
    const { resolver, purged } = recordingResolver();
    await withSequencerEnv(id, { RESOLVER: resolver }, async () => {
      await letTimePass(id);
      expect(await runDurableObjectAlarm(sequencer(id))).toBe(true);
      expect(purged).toEqual([id]);
    });
  });
});
