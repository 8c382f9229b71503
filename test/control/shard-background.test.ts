import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { type FeedEntry, feedSeqOf, mintIdentityId, snapshotKey } from "@passport/domain";
import { describe, expect, it, vi } from "vitest";
import { claimDuePages } from "../../workers/control/src/binding-checks/recheck.ts";
import { createPassportStatements } from "../../workers/control/src/db/passports.ts";
import { organisations } from "../../workers/control/src/db/schema.ts";
import { onEveryShard } from "../../workers/control/src/db/shard-tasks.ts";
import { shardsOf } from "../../workers/control/src/db/shards.ts";
import { archiveHistory, archiveShardAt, HISTORY_ARCHIVE } from "../../workers/control/src/history/archive.ts";
import worker from "../../workers/control/src/index.ts";
import { drainOutbox } from "../../workers/control/src/publication/publish.ts";
import { queueNames } from "../../workers/control/src/queues.ts";
import { receiver, uniqueHost } from "../support/hosts.ts";
import { freshOrganisation } from "../support/tokens.ts";

// The control plane's work outside the API, routed to the shard of what it touches
// (docs/sharding.md): the publication path, the crons and the queue consumers, each shown working
// for an organisation the directory places in shard 1, where a query sent to `DB` finds nothing.

const shards = shardsOf(env);
const DAY = 86_400_000;
const RESOLVER = "http://resolver.test";

/** An organisation placed in `shard`, with one passport (pending publication) created `at`. */
async function passportIn(shard: number, at = new Date()) {
  const organisationId = freshOrganisation();
  expect(await shards.placeOrganisation(organisationId, { shard })).toBe(shard);
  const db = shards.shard(shard);
  await db.insert(organisations).values({ id: organisationId, name: `Shard ${shard} organisation` });
  const id = mintIdentityId();
  await shards.registerIdentity(id, organisationId);
  await db.batch(
    createPassportStatements(db, {
      id,
      organisationId,
      family: "api",
      displayName: `In shard ${shard}`,
      bindings: [],
      actor: "test",
      at: at.toISOString(),
    }),
  );
  return { organisationId, id, d1: shards.bindings[shard] as D1Database };
}

async function publicationsOf(d1: D1Database, id: string) {
  const { results } = await d1
    .prepare("SELECT seq, record_version, log_index, written_at FROM publications WHERE passport_id = ? ORDER BY seq")
    .bind(id)
    .all<{ seq: number; record_version: number; log_index: number | null; written_at: string | null }>();
  return results;
}

async function outboxOf(d1: D1Database, id: string) {
  return d1.prepare("SELECT * FROM outbox WHERE passport_id = ?").bind(id).first();
}

/** Delivers one message to the worker's queue handler as the queue would; whether it was acked. */
async function deliver(queue: string, body: unknown): Promise<boolean> {
  const batch = createMessageBatch(queue, [{ id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env, ctx);
  const result = await getQueueResult(batch, ctx);
  return result.explicitAcks.includes(batch.messages[0]?.id as string);
}

describe("the publication path in shard 1", () => {
  it("the outbox drain publishes a passport of a shard-1 organisation, recorded in its shard, and its status reads there", async () => {
    const { id, d1 } = await passportIn(1);
    expect(await outboxOf(env.DB, id)).toBeNull();
    expect(await outboxOf(d1, id)).not.toBeNull();

    const drained = await drainOutbox(env, new Date(Date.now() + 60_000));
    expect(drained.published).toBeGreaterThanOrEqual(1);
    const [publication] = await publicationsOf(d1, id);
    expect(publication).toMatchObject({ record_version: 1 });
    expect(publication?.written_at).not.toBeNull();
    expect(publication?.log_index).not.toBeNull();
    expect(await outboxOf(d1, id)).toBeNull();
    expect(await publicationsOf(env.DB, id)).toEqual([]);
    const snapshot = await env.SNAPSHOTS.getWithMetadata<{ log_index: number }>(snapshotKey(id));
    expect(snapshot.metadata?.log_index).toBe(publication?.log_index);

    // The sequencer's status reads the current state from the passport's shard.
    const status = await env.PUBLICATION_SEQUENCER.getByName(id).status(id);
    expect(status).toMatchObject({ found: true, pending: false, identity_id: id });
  });

  it("a passport of an organisation being moved waits in its outbox while the drain publishes every other", async () => {
    const [moving, beside, elsewhere] = await Promise.all([passportIn(1), passportIn(1), passportIn(0)]);
    const fencedAt = new Date().toISOString();
    await env.DIRECTORY?.prepare("UPDATE organisation_shards SET moving_to = 0 WHERE organisation_id = ?")
      .bind(moving.organisationId)
      .run();
    await moving.d1
      .prepare("INSERT INTO organisation_fences (organisation_id, fenced_at) VALUES (?, ?)")
      .bind(moving.organisationId, fencedAt)
      .run();
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      await drainOutbox(env, new Date(Date.now() + 60_000));
    } finally {
      errors.mockRestore();
    }
    // Nothing of the moving organisation was written, not even the failed attempt.
    expect(await publicationsOf(moving.d1, moving.id)).toEqual([]);
    expect(await outboxOf(moving.d1, moving.id)).toMatchObject({ attempts: 0 });
    for (const other of [beside, elsewhere]) {
      expect((await publicationsOf(other.d1, other.id)).map((p) => p.record_version)).toEqual([1]);
      expect(await outboxOf(other.d1, other.id)).toBeNull();
    }

    // The fence lifted (the move undone), the next drain publishes it.
    await env.DIRECTORY?.prepare("UPDATE organisation_shards SET moving_to = NULL WHERE organisation_id = ?")
      .bind(moving.organisationId)
      .run();
    await moving.d1
      .prepare("DELETE FROM organisation_fences WHERE organisation_id = ?")
      .bind(moving.organisationId)
      .run();
    await drainOutbox(env, new Date(Date.now() + 60_000));
    expect((await publicationsOf(moving.d1, moving.id)).map((p) => p.record_version)).toEqual([1]);
  });

  it("the feed holds the publications of both shards, each at its log index, even when the shards number them alike", async () => {
    // Both shards' next publication gets the same `publications.seq`: a placeholder row in each
    // moves its numbering to the same point.
    const placeholders = await Promise.all([0, 1].map((shard) => passportIn(shard)));
    const next = await Promise.all(
      shards.bindings.map(async (d1) => {
        const row = await d1.prepare("SELECT coalesce(max(seq), 0) AS n FROM publications").first<{ n: number }>();
        return row?.n ?? 0;
      }),
    );
    const base = Math.max(...next) + 1;
    for (const [shard, placeholder] of placeholders.entries()) {
      const d1 = shards.bindings[shard] as D1Database;
      // Never published: its outbox row goes, and the row looks written and logged to everything else.
      await d1.prepare("DELETE FROM outbox WHERE passport_id = ?").bind(placeholder.id).run();
      await d1
        .prepare(
          `INSERT INTO publications (seq, passport_id, record_version, digest, published_at, change_kinds, written_at, log_index)
           VALUES (?1, ?2, 1, 'sha256-placeholder', ?3, '[]', ?3, 999999999)`,
        )
        .bind(base, placeholder.id, new Date().toISOString())
        .run();
    }
    const inShard = await Promise.all([0, 1].map((shard) => passportIn(shard)));
    await drainOutbox(env, new Date(Date.now() + 60_000));

    const published = await Promise.all(inShard.map(async ({ id, d1 }) => (await publicationsOf(d1, id))[0]));
    // The collision the shards' own numbering would make: the same seq in both.
    expect(published.map((p) => p?.seq)).toEqual([base + 1, base + 1]);
    const entries: FeedEntry[] = [];
    for (const [i, publication] of published.entries()) {
      const logIndex = publication?.log_index as number;
      const response = await env.TEST_RESOLVER.fetch(`${RESOLVER}/api/feed.json?after=${logIndex}&limit=1`);
      const page = await response.json<{ entries: FeedEntry[] }>();
      expect(page.entries).toHaveLength(1);
      expect(page.entries[0]).toMatchObject({
        seq: feedSeqOf(logIndex),
        identity_id: inShard[i]?.id,
        record_version: 1,
      });
      entries.push(page.entries[0] as FeedEntry);
    }
    expect(new Set(entries.map((e) => e.seq)).size).toBe(2);
  });
});

describe("the crons in every shard", () => {
  it("one shard's failure is logged and the others' work goes on", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const results = await onEveryShard(shards, "test_shard_failed", async (_, shard) => {
        if (shard === 0) throw new Error("shard 0 unavailable");
        return shard;
      });
      expect(results).toEqual([undefined, 1]);
      expect(errors.mock.calls.map(([line]) => JSON.parse(String(line)))).toContainEqual({
        level: "error",
        event: "test_shard_failed",
        shard: 0,
        message: "Error: shard 0 unavailable",
      });
    } finally {
      errors.mockRestore();
    }
  });

  it("claims a shard-1 passport's due re-check, and the consumer records the check in its shard", async () => {
    const { id, d1 } = await passportIn(1);
    const bindingId = crypto.randomUUID();
    const now = new Date();
    const host = uniqueHost("recheck");
    await d1
      .prepare(
        `INSERT INTO bindings (id, passport_id, class, value, bound_at, verification_state, verification_method,
           verified_at, verification_fresh_until, next_check_at)
         VALUES (?1, ?2, 'manifest', ?3, ?4, 'verified', 'http_well_known', ?4, ?5, ?6)`,
      )
      .bind(
        bindingId,
        id,
        `https://${host}/card.json`,
        new Date(now.getTime() - DAY).toISOString(),
        new Date(now.getTime() + DAY).toISOString(),
        new Date(now.getTime() - 60_000).toISOString(),
      )
      .run();

    const claimed: { binding_id: string; passport_id: string; claim: string }[] = [];
    await claimDuePages(env, now, async (rows, claim) => {
      claimed.push(...rows.map((row) => ({ ...row, claim })));
    });
    const mine = claimed.find((row) => row.binding_id === bindingId);
    expect(mine).toMatchObject({ passport_id: id });

    expect(await deliver(queueNames(undefined).bindingChecks, mine)).toBe(true);
    const checked = await d1
      .prepare("SELECT last_checked_at, check_claim FROM bindings WHERE id = ?")
      .bind(bindingId)
      .first<{ last_checked_at: string | null; check_claim: string | null }>();
    expect(checked?.last_checked_at).not.toBeNull();
    expect(checked?.check_claim).toBeNull();
  });

  it("archives history one shard a minute in turn, a shard-1 passport's in shard 1", async () => {
    const minute = Date.UTC(2026, 0, 1, 12, 0);
    expect([0, 1, 2, 3].map((m) => archiveShardAt(new Date(minute + m * 60_000), 2))).toEqual([0, 1, 0, 1]);
    expect([0, 1, 2].map((m) => archiveShardAt(new Date(minute + m * 60_000), 3))).toEqual([0, 1, 2]);

    // Two published versions: the newest event and publication always stay in D1.
    const { organisationId, id, d1 } = await passportIn(1);
    await drainOutbox(env, new Date(Date.now() + 60_000));
    const at = new Date().toISOString();
    await d1.batch([
      d1.prepare("UPDATE passports SET display_name = 'Renamed', record_version = 2 WHERE id = ?").bind(id),
      d1
        .prepare(
          `INSERT INTO events (passport_id, organisation_id, actor, at, kind, detail, record_version)
           VALUES (?1, ?2, 'test', ?3, 'passport.updated', '{"fields":["display_name"]}', 2)`,
        )
        .bind(id, organisationId, at),
      d1.prepare("INSERT INTO outbox (passport_id, record_version, next_attempt_at) VALUES (?, 2, ?)").bind(id, at),
    ]);
    await drainOutbox(env, new Date(Date.now() + 60_000));
    expect((await publicationsOf(d1, id)).map((p) => p.record_version)).toEqual([1, 2]);
    const partOf = () => d1.prepare("SELECT key FROM history_archives WHERE passport_id = ?").bind(id).first();
    // Shard 1's walk of its events reaches this passport within a few runs (other tests' passports
    // in the shard may come first).
    const limits = { ...HISTORY_ARCHIVE, partEvents: 1 };
    for (let run = 0; run < 20 && (await partOf()) === null; run++) {
      await archiveHistory(env, shards.shard(1), new Date(Date.now() + 8 * DAY + run * 120_000), limits);
    }
    expect(await partOf()).not.toBeNull();
    // Shard 0 holds nothing of it.
    const inShardZero = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE passport_id = ?").bind(id).first();
    expect(inShardZero).toEqual({ n: 0 });
  });
});

describe("the queue consumers", () => {
  it("fans a shard-1 passport's publication out to its organisation's subscribers, the deliveries in shard 0", async () => {
    const { organisationId, id, d1 } = await passportIn(1);
    await drainOutbox(env, new Date(Date.now() + 60_000));
    const [publication] = await publicationsOf(d1, id);
    const host = uniqueHost("fanout");
    await receiver(host, { path: "/events" });
    const subscriptionId = `sub_${crypto.randomUUID().replaceAll("-", "")}`;
    await env.DB.prepare(
      `INSERT INTO notification_subscriptions (id, subscriber, endpoint_url, endpoint_host, target_kind, target_id, event_kinds, confirmed_at)
       VALUES (?1, 'user-shard-test', ?2, ?3, 'organisation', ?4, '["version"]', ?5)`,
    )
      .bind(subscriptionId, `https://${host}/events`, host, organisationId, new Date(Date.now() - DAY).toISOString())
      .run();

    const announced = {
      kind: "publication",
      version: 1,
      passport_id: id,
      record_version: publication?.record_version,
      digest: "sha256-announced",
      previous_digest: null,
      published_at: new Date().toISOString(),
      change_kinds: ["passport.created"],
    };
    expect(await deliver(queueNames(undefined).notifications, announced)).toBe(true);
    const delivery = await env.DB.prepare(
      "SELECT passport_id, record_version FROM notification_deliveries WHERE subscription_id = ?",
    )
      .bind(subscriptionId)
      .first();
    expect(delivery).toEqual({ passport_id: id, record_version: 1 });
  });
});
