// Benchmark reference for each published write: exactly the D1, KV and Durable Object calls the
// route makes and nothing else. Its D1 database has the control plane's schema (every migration,
// so the same indexes and triggers run), and it sends the same SQL the route sends, in the same
// round trips (docs/publication.md, "Round trips per write"); no authentication, validation,
// projection, signing or answer document. The path names the route:
//
//   POST /create    membership read; commit (passport, event, outbox + the 8 aggregate reads)
//   POST /update    passport-and-membership read; commit (update, event, outbox + 8 reads)
//   POST /state     as /update, setting the availability
//   POST /binding   passport-and-membership read; the existing-binding read and the duplicate
//                   reads in one batch (3 reads); commit (update, binding, event, outbox + 8 reads)
//
// each followed by the publication, made as the control plane makes it: a call to the passport's
// own Durable Object (the sequencer's place: a new object for a create), which reads the aggregate
// and the publication's reads (11), records the publication and reads it back (2), appends one
// entry to a single log object's storage, puts the snapshot and then the history and feed entries
// together, records them written and clears the outbox row (2), and last hands the identity's two
// purges to a single purge keeper object, which queues them in its storage and sets its alarm.
// POST /__pool takes the identity ids the changes take in turn (as the bench's wrapper does).
//
// `?storage` makes the same D1 and KV calls without any Durable Object (the publication's calls
// inline, no log append, no purge keeper): its ratio shows what the objects cost by themselves
// (scripts/bench/README.md).
import { DurableObject } from "cloudflare:workers";

const ORGANISATION = "org_bench";
const SUBJECT = "bench-owner";
const VALUE = JSON.stringify({ padding: "x".repeat(1000) });
let pool = [];
let next = 0;
let numbered = 0;

/** The 8 reads a passport's view and record are projected from (`aggregateReads`). */
function aggregateReads(db, id) {
  return [
    db.prepare(`SELECT * FROM "passports" WHERE "id" = ?`).bind(id),
    db
      .prepare(
        `SELECT * FROM "organisations" WHERE "id" IN (SELECT "organisation_id" FROM "passports" WHERE "id" = ?) OR "id" IN (SELECT "operator_organisation_id" FROM "passports" WHERE "id" = ?)`,
      )
      .bind(id, id),
    db
      .prepare(
        `SELECT * FROM "organisations" WHERE "id" IN (SELECT "parent_id" FROM "organisations" WHERE "id" IN (SELECT "organisation_id" FROM "passports" WHERE "id" = ?))`,
      )
      .bind(id),
    db.prepare(`SELECT * FROM "bindings" WHERE "passport_id" = ? ORDER BY "bound_at", "class", "value"`).bind(id),
    db
      .prepare(
        `SELECT * FROM "evidence" WHERE "passport_id" = ? AND "withdrawn_at" IS NULL ORDER BY "observed_at", "id"`,
      )
      .bind(id),
    db.prepare(`SELECT * FROM "authority" WHERE "passport_id" = ? ORDER BY "created_at", "id"`).bind(id),
    db.prepare(`SELECT "record_version", "next_attempt_at" FROM "outbox" WHERE "passport_id" = ?`).bind(id),
    db
      .prepare(
        `SELECT "passport_uses"."target_id", "passports"."family", "passport_uses"."declared_at", "passports"."display_name", "passports"."lifecycle" FROM "passport_uses" INNER JOIN "passports" ON "passports"."id" = "passport_uses"."target_id" WHERE "passport_uses"."agent_id" = ? ORDER BY "passport_uses"."declared_at", "passport_uses"."target_id"`,
      )
      .bind(id),
  ];
}

/** The history event and outbox row of a change's version. */
function versionRows(db, id, version, kind, detail, at) {
  return [
    db
      .prepare(
        `INSERT INTO "events" ("passport_id", "organisation_id", "actor", "at", "kind", "detail", "record_version") VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(id, ORGANISATION, SUBJECT, at, kind, JSON.stringify(detail), version),
    db
      .prepare(
        `INSERT INTO "outbox" ("passport_id", "record_version", "next_attempt_at") VALUES (?, ?, ?) ON CONFLICT ("passport_id") DO UPDATE SET "record_version" = ?, "next_attempt_at" = ?, "attempts" = 0, "bulk" = 0`,
      )
      .bind(id, version, at, version, at),
  ];
}

/** The publication's own calls: what `writePublication` makes, in order; `beforeSnapshot` is the log append. */
async function publicationCalls(env, id, beforeSnapshot = async () => 0) {
  const db = env.DB;
  const [passport, , , , , , , [last]] = (
    await db.batch([
      ...aggregateReads(db, id),
      db
        .prepare(`SELECT * FROM "publications" WHERE "passport_id" = ? ORDER BY "record_version" DESC LIMIT 1`)
        .bind(id),
      db
        .prepare(
          `SELECT "kind" FROM "events" WHERE "passport_id" = ? AND "record_version" > coalesce((SELECT max("record_version") FROM "publications" WHERE "passport_id" = ?), 0) ORDER BY "record_version"`,
        )
        .bind(id, id),
      db.prepare(`SELECT "manifest_key" FROM "published_manifests" WHERE "passport_id" = ?`).bind(id),
    ])
  ).map((result) => result.results);
  const version = passport[0].record_version;
  const at = new Date().toISOString();
  const digest = `sha-256:${crypto.randomUUID()}`;
  const [, [publication]] = (
    await db.batch([
      db
        .prepare(
          `INSERT INTO "publications" ("passport_id", "record_version", "digest", "previous_digest", "published_at", "change_kinds") VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT ("passport_id", "record_version") DO NOTHING`,
        )
        .bind(id, version, digest, last?.digest ?? null, at, JSON.stringify(["bench"])),
      db.prepare(`SELECT * FROM "publications" WHERE "passport_id" = ? AND "record_version" = ?`).bind(id, version),
    ])
  ).map((result) => result.results);
  const logIndex = await beforeSnapshot(publication);
  await env.KV.put(`passport:${id}`, VALUE, { metadata: { digest, record_version: version, log_index: logIndex } });
  await Promise.all([
    env.KV.put(`history:${id}:${version}`, VALUE, { metadata: { digest } }),
    env.KV.put(`feed:${publication.seq}`, VALUE, { metadata: { digest } }),
  ]);
  await db.batch([
    db
      .prepare(`UPDATE "publications" SET "written_at" = ?, "log_index" = ? WHERE "seq" = ?`)
      .bind(at, logIndex, publication.seq),
    db.prepare(`DELETE FROM "outbox" WHERE "passport_id" = ? AND "record_version" <= ?`).bind(id, version),
  ]);
}

/** The passport and the caller's membership in its organisation, in one query (`passportWithMembership`). */
async function passportWithMembership(db, id) {
  return db
    .prepare(
      `SELECT "passports".*, "members"."role" FROM "passports" INNER JOIN "members" ON "members"."organisation_id" = "passports"."organisation_id" AND "members"."subject" = ? WHERE "passports"."id" = ?`,
    )
    .bind(SUBJECT, id)
    .first();
}

/** The request's own calls before publication; returns the identity id the publication is about. */
async function requestCalls(route, db) {
  const at = new Date().toISOString();
  if (route === "create") {
    const id = `psp_${crypto.randomUUID().replaceAll("-", "").slice(0, 26)}`;
    await db
      .prepare(`SELECT "organisation_id", "role" FROM "members" WHERE "subject" = ? AND "organisation_id" = ?`)
      .bind(SUBJECT, ORGANISATION)
      .first();
    await db.batch([
      db
        .prepare(
          `INSERT INTO "passports" ("id", "organisation_id", "family", "display_name", "state_as_of", "created_at", "updated_at") VALUES (?, ?, 'api', 'Bench API', ?, ?, ?)`,
        )
        .bind(id, ORGANISATION, at, at, at),
      ...versionRows(db, id, 1, "passport.created", { family: "api", bindings: [] }, at),
      ...aggregateReads(db, id),
    ]);
    return id;
  }
  const id = pool[next++ % pool.length];
  const passport = await passportWithMembership(db, id);
  const version = passport.record_version + 1;
  const update = (set, values) =>
    db
      .prepare(
        `UPDATE "passports" SET ${set ? `${set}, ` : ""}"record_version" = ?, "updated_at" = ? WHERE "id" = ? AND "record_version" = ?`,
      )
      .bind(...values, version, at, id, passport.record_version);
  const change = [];
  if (route === "update") {
    change.push(update(`"display_name" = ?`, [`Renamed ${next}`]));
    change.push(...versionRows(db, id, version, "passport.updated", { display_name: `Renamed ${next}` }, at));
  } else if (route === "state") {
    change.push(update(`"availability" = ?, "state_as_of" = ?`, ["degraded", at]));
    change.push(...versionRows(db, id, version, "state.changed", { availability: "degraded" }, at));
  } else {
    const value = `https://add-${++numbered}.bench.example/`;
    await db.batch([
      db
        .prepare(`SELECT * FROM "bindings" WHERE "passport_id" = ? AND "class" = 'endpoint' AND "value" = ? LIMIT 1`)
        .bind(id, value),
      db
        .prepare(
          `SELECT "passports"."id", "bindings"."value" FROM "bindings" INNER JOIN "passports" ON "bindings"."passport_id" = "passports"."id" WHERE +"passports"."organisation_id" = ? AND "passports"."family" = 'api' AND "passports"."lifecycle" <> 'retired' AND "bindings"."class" = 'endpoint' AND "bindings"."value" IN (?)`,
        )
        .bind(ORGANISATION, value),
      db
        .prepare(
          `SELECT "passports"."id", "passports"."organisation_id", "bindings"."value" FROM "bindings" INNER JOIN "passports" ON "bindings"."passport_id" = "passports"."id" WHERE "passports"."organisation_id" <> ? AND "passports"."lifecycle" <> 'retired' AND "bindings"."class" = 'endpoint' AND "bindings"."value" IN (?) AND +"bindings"."verification_state" = 'verified' AND "bindings"."verification_fresh_until" > ?`,
        )
        .bind(ORGANISATION, value, at),
    ]);
    const bindingId = crypto.randomUUID();
    change.push(update("", []));
    change.push(
      db
        .prepare(
          `INSERT INTO "bindings" ("id", "passport_id", "class", "value", "bound_at") VALUES (?, ?, 'endpoint', ?, ?)`,
        )
        .bind(bindingId, id, value, at),
    );
    change.push(
      ...versionRows(db, id, version, "binding.added", { binding_id: bindingId, class: "endpoint", value }, at),
    );
  }
  await db.batch([...change, ...aggregateReads(db, id)]);
  return id;
}

const ROUTES = new Set(["create", "update", "state", "binding"]);

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/__pool") {
      pool = await request.json();
      return new Response(null, { status: 204 });
    }
    const route = url.pathname.slice(1);
    if (!ROUTES.has(route)) return new Response("unknown route", { status: 404 });
    const id = await requestCalls(route, env.DB);
    if (url.searchParams.has("storage")) await publicationCalls(env, id);
    else await env.SEQUENCER.getByName(id).publish(id);
    return Response.json({ identity_id: id }, { status: route === "create" ? 201 : 200 });
  },
};

/** Stands in for the publication sequencer: the same publication calls, from the passport's own object. */
export class Sequencer extends DurableObject {
  async publish(id) {
    await publicationCalls(this.env, id, async (publication) => {
      const { index } = await this.env.LOG.getByName("log").append({ id, digest: publication.digest });
      return index;
    });
    // After the publication is recorded written, as `requestPurges`: one now, one a minute later.
    await this.env.PURGE_BUDGET.getByName("purges").enqueue([
      { id, phase: "now", afterMs: 1000 },
      { id, phase: "later", afterMs: 60_000 },
    ]);
    return { id };
  }
}

/** Stands in for the transparency log's append: one entry in the object's storage, its index answered. */
export class Log extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS entries (idx INTEGER PRIMARY KEY, entry TEXT NOT NULL)");
  }

  append(entry) {
    const [row] = this.ctx.storage.sql
      .exec("INSERT INTO entries (entry) VALUES (?) RETURNING idx", JSON.stringify(entry))
      .toArray();
    return { index: row.idx };
  }
}

/**
 * Stands in for the purge keeper's `enqueue`: each purge upserted into the object's queue by
 * identity and phase, and the alarm moved earlier when the soonest purge comes before it. Its
 * alarm drops what is due (the keeper's purge calls are a few a minute, within the budget).
 */
export class PurgeBudget extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS purge_queue (identity_id TEXT NOT NULL, phase TEXT NOT NULL, due_at INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (identity_id, phase))",
    );
  }

  async enqueue(purges) {
    const now = Date.now();
    const sql = this.ctx.storage.sql;
    for (const { id, phase, afterMs } of purges) {
      const { seq } = sql.exec("SELECT coalesce(max(seq), 0) + 1 AS seq FROM purge_queue").one();
      sql.exec(
        "INSERT INTO purge_queue (identity_id, phase, due_at, seq) VALUES (?, ?, ?, ?) ON CONFLICT (identity_id, phase) DO UPDATE SET due_at = min(due_at, excluded.due_at), seq = excluded.seq",
        id,
        phase,
        now + afterMs,
        seq,
      );
    }
    const soonest = now + Math.min(...purges.map((p) => p.afterMs));
    const current = await this.ctx.storage.getAlarm();
    if (current === null || soonest < current) await this.ctx.storage.setAlarm(soonest);
  }

  async alarm() {
    const now = Date.now();
    this.ctx.storage.sql.exec("DELETE FROM purge_queue WHERE due_at <= ?", now);
    const [next] = this.ctx.storage.sql.exec("SELECT min(due_at) AS at FROM purge_queue").toArray();
    if (next?.at) await this.ctx.storage.setAlarm(next.at);
  }
}
