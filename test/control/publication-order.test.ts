import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { historyPrefix, type SnapshotMetadata, snapshotKey } from "@passport/domain";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import { drainOutbox, type PublishEnv } from "../../workers/control/src/publication/publish.ts";
import { Caller, resolve } from "../support/api.ts";
import { withSequencerEnv } from "../support/publication-sequencer.ts";
import { shardOfIdentity } from "../support/shards.ts";

const later = () => new Date(Date.now() + 3_600_000);

/**
 * Holds one write until the test opens it. Both sides poll a flag instead of awaiting a promise
 * the other side resolves: in workerd a continuation runs in the I/O context of whoever resolved
 * the promise, so the test would otherwise go on inside the sequencer object, and vice versa.
 */
class Gate {
  arrived = false;
  opened = false;
  async hold() {
    this.arrived = true;
    while (!this.opened) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  reached() {
    return vi.waitFor(() => expect(this.arrived).toBe(true), { timeout: 10_000, interval: 5 });
  }
}

/** The real KV, except that the passport's snapshot write runs `before` first (to stall or fail it). */
function kvWith(id: string, before: (version: number) => Promise<void>): KVNamespace {
  const kv = env.SNAPSHOTS;
  return {
    get: kv.get.bind(kv),
    getWithMetadata: kv.getWithMetadata.bind(kv),
    list: kv.list.bind(kv),
    delete: kv.delete.bind(kv),
    put: async (key: string, value: string, options?: KVNamespacePutOptions) => {
      const metadata = options?.metadata as SnapshotMetadata | undefined;
      if (key === snapshotKey(id) && metadata) await before(metadata.record_version);
      return kv.put(key, value, options);
    },
  } as unknown as KVNamespace;
}

function stalledAt(id: string, version: number, gate: Gate): KVNamespace {
  return kvWith(id, async (written) => {
    if (written === version) await gate.hold();
  });
}

const failingKv = (id: string) =>
  kvWith(id, async () => {
    throw new Error("KV unavailable");
  });

/**
 * The control plane's environment with its sequencer calls announced: `queued()` resolves once a
 * publish call has reached the passport's sequencer (a later message on the same stub is
 * delivered after it), so the test knows the call is waiting there.
 */
function announcing(id: string): { env: PublishEnv; queued: () => Promise<void> } {
  const stub = env.PUBLICATION_SEQUENCER.getByName(id);
  let called = () => {};
  const call = new Promise<void>((resolve) => {
    called = resolve;
  });
  const sequencer = {
    getByName: () => ({
      publish: (identityId: string) => {
        const result = stub.publish(identityId);
        called();
        return result;
      },
    }),
  } as unknown as PublishEnv["PUBLICATION_SEQUENCER"];
  return {
    env: { ...env, PUBLICATION_SEQUENCER: sequencer },
    queued: async () => {
      await call;
      await runInDurableObject(stub, () => undefined);
    },
  };
}

async function rename(caller: Caller, id: string, name: string, environment: PublishEnv = env) {
  return app.request(
    `http://control.test/v1/passports/${id}`,
    {
      method: "PATCH",
      headers: { authorization: `Bearer ${caller.token}`, "content-type": "application/json" },
      body: JSON.stringify({ display_name: name }),
    },
    environment,
  );
}

async function committedVersion(id: string): Promise<number> {
  const row = await (await shardOfIdentity(id))
    .prepare("SELECT record_version FROM passports WHERE id = ?")
    .bind(id)
    .first<{ record_version: number }>();
  return row?.record_version ?? 0;
}

/**
 * The resolver serves the newest committed version, nothing is left owed in the outbox, and the
 * published chain is linear in D1 and in the KV history: each publication chains to the one
 * before it, and no two share a predecessor.
 */
async function expectNewestPublished(id: string, caller: Caller) {
  const newest = await committedVersion(id);
  const snapshot = await env.SNAPSHOTS.getWithMetadata<SnapshotMetadata>(snapshotKey(id));
  expect(snapshot.metadata?.record_version).toBe(newest);
  expect((await resolve(id)).record.record_version).toBe(newest);
  const shard = await shardOfIdentity(id);
  expect(await shard.prepare("SELECT 1 FROM outbox WHERE passport_id = ?").bind(id).first()).toBeNull();

  const { results } = await shard
    .prepare(
      "SELECT record_version, digest, previous_digest FROM publications WHERE passport_id = ? ORDER BY record_version",
    )
    .bind(id)
    .all<{ record_version: number; digest: string; previous_digest: string | null }>();
  expect(results.at(-1)?.record_version).toBe(newest);
  expect(results.at(-1)?.digest).toBe(snapshot.metadata?.digest);
  results.forEach((row, i) => {
    expect(row.previous_digest, `version ${row.record_version}`).toBe(i === 0 ? null : results[i - 1]?.digest);
  });

  const { keys } = await env.SNAPSHOTS.list<{ record_version: number; digest: string; previous_digest?: string }>({
    prefix: historyPrefix(id),
  });
  const history = keys.map((key) => key.metadata);
  expect(history.map((entry) => entry?.record_version)).toEqual(results.map((row) => row.record_version));
  history.forEach((entry, i) => {
    expect(entry?.previous_digest).toBe(i === 0 ? undefined : history[i - 1]?.digest);
  });
  const served = await caller.json("GET", `/v1/passports/${id}`);
  expect(served.record_version).toBe(newest);
}

describe("ordered publication", () => {
  it("a drain stalled writing version 2 cannot overwrite version 3 published meanwhile by a change", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    await withSequencerEnv(id, { SNAPSHOTS: failingKv(id) }, async () => {
      expect((await rename(owner, id, "Two")).status).toBe(200);
    });

    const gate = new Gate();
    await withSequencerEnv(id, { SNAPSHOTS: stalledAt(id, 2, gate) }, async () => {
      const drained = drainOutbox(env, later());
      await gate.reached();
      const request = announcing(id);
      const changed = rename(owner, id, "Three", request.env);
      await request.queued();
      gate.opened = true;
      await drained;
      expect((await changed).status).toBe(200);
    });

    expect(await committedVersion(id)).toBe(3);
    await expectNewestPublished(id, owner);
    expect((await resolve(id)).record.display_name).toBe("Three");
  });

  it("a change stalled writing version 2 cannot overwrite version 3 published by a drain and a later change", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const gate = new Gate();
    await withSequencerEnv(id, { SNAPSHOTS: stalledAt(id, 2, gate) }, async () => {
      const first = rename(owner, id, "Two");
      await gate.reached();
      const drain = announcing(id);
      const drained = drainOutbox(drain.env, later());
      await drain.queued();
      const request = announcing(id);
      const second = rename(owner, id, "Three", request.env);
      await request.queued();
      gate.opened = true;
      expect((await first).status).toBe(200);
      expect((await second).status).toBe(200);
      await drained;
    });

    expect(await committedVersion(id)).toBe(3);
    await expectNewestPublished(id, owner);
    expect((await resolve(id)).record.display_name).toBe("Three");
  });

  it("whatever the interleaving of changes, drains and retries, the newest version wins and the chain stays linear", async () => {
    const owner = await Caller.create("owner");
    const action = fc.record({
      kind: fc.constantFrom("change", "drain", "failed-change"),
      pauses: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 4 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 2, maxLength: 5 }), async (actions) => {
        const { identity_id: id } = await owner.createPassport();
        // Each snapshot write waits a random few milliseconds, so publications overlap in
        // different orders; each failed-change makes one snapshot write fail (an outage), which
        // leaves its version to the outbox.
        let turn = 0;
        let failures = actions.filter((a) => a.kind === "failed-change").length;
        const pauses = actions.flatMap((a) => a.pauses);
        const flakyKv = kvWith(id, async () => {
          const pause = pauses[turn++ % pauses.length] ?? 0;
          await new Promise((resolve) => setTimeout(resolve, pause));
          if (turn % 2 === 0 && failures > 0) {
            failures--;
            throw new Error("KV unavailable");
          }
        });
        await withSequencerEnv(id, { SNAPSHOTS: flakyKv }, async () => {
          const runs = actions.map(async ({ kind }, i) => {
            // Staggered starts: each change commits while earlier publications may still be writing.
            await new Promise((resolve) => setTimeout(resolve, i * 15));
            if (kind === "drain") return void (await drainOutbox(env, later()));
            const response = await rename(owner, id, `Name ${i}`);
            // Racing changes without If-Match may lose the version race (412); that is not a publication.
            expect([200, 412]).toContain(response.status);
          });
          await Promise.all(runs);
        });
        // The outbox is empty only when the newest version is published.
        const owed = await (await shardOfIdentity(id))
          .prepare("SELECT 1 FROM outbox WHERE passport_id = ?")
          .bind(id)
          .first();
        const snapshot = await env.SNAPSHOTS.getWithMetadata<SnapshotMetadata>(snapshotKey(id));
        if (!owed) expect(snapshot.metadata?.record_version).toBe(await committedVersion(id));
        // The scheduled retry, after any backoff the drains above recorded, repairs what the outage left.
        await drainOutbox(env, new Date(Date.now() + 2 * 3_600_000));
        await expectNewestPublished(id, owner);
      }),
      { numRuns: 10 },
    );
  }, 60_000);

  it("a passport is published only by its own sequencer", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const refusal = await env.PUBLICATION_SEQUENCER.getByName(`${id}-other`).publish(id);
    expect(refusal).toEqual({ ok: false, error: expect.stringMatching(/cannot publish/) });
  });

  it("refuses, in D1, a second publication that chains to the same predecessor", async () => {
    const insert = (version: number, digest: string, previous: string | null) =>
      env.DB.prepare(
        "INSERT INTO publications (passport_id, record_version, digest, previous_digest, published_at, change_kinds) VALUES (?, ?, ?, ?, ?, '[]')",
      )
        .bind("psp_fork_test", version, digest, previous, new Date().toISOString())
        .run();
    await insert(1, "sha-256:one", null);
    await insert(2, "sha-256:two", "sha-256:one");
    await expect(insert(3, "sha-256:three", "sha-256:one")).rejects.toThrow(/UNIQUE constraint failed/);
  });
});
