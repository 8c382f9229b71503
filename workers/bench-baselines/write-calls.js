// Benchmark reference for each published write: only the storage calls the route makes, in the
// same order and the same shape (D1 round trips with as many statements each, docs/publication.md
// "Round trips per write"; the snapshot put, then the history and feed entries together), with no
// authentication, validation, signing or projection. The path names the route:
//
//   POST /create    a create:       membership read; commit (3 writes + the 7 aggregate reads);
//   POST /update    a PATCH:        passport-and-membership read; commit (3 writes + 7 reads);
//   POST /state     a state change: as a PATCH;
//   POST /binding   a binding add:  passport-and-membership read; the existing-binding read beside
//                                   the duplicate batch (2 reads); commit (4 writes + 7 reads);
//
// each followed by the publication's calls: the aggregate and publication reads (10), the
// publication recorded and read back (2), three KV puts, and the closing batch (3).
//
// `?platform` adds the calls the publication promise makes beyond D1 and KV, as the control plane
// makes them: the publication runs in a per-row Durable Object (the sequencer's place: a new
// object for a create, one per pooled row for a change), which appends one entry to a single
// log object's storage before the snapshot, calls a purge entry point over a service binding, and
// stores its second purge with an alarm. Its ratio shows what those calls cost by themselves
// (scripts/bench/README.md). Changes take rows in turn out of the first POOL rows of the table, as
// the bench's changes take pooled passports in turn.
import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";

const VALUE = JSON.stringify({ padding: "x".repeat(1000) });
const POOL = 2000;
let next = 0;

const read = (db, key, kind) =>
  db.prepare("SELECT * FROM baseline_steps WHERE row_id = ? AND kind = ?").bind(key, kind);
const step = (db, key, kind, at) =>
  db.prepare("INSERT INTO baseline_steps (row_id, kind, at) VALUES (?, ?, ?)").bind(key, kind, at);

/** The 7 reads a view and a record are projected from: the row, its two organisations, its entries. */
function aggregateReads(db, key) {
  const row = db.prepare("SELECT * FROM baseline_rows WHERE id = ?").bind(key);
  return [
    row,
    row,
    row,
    read(db, key, "binding"),
    read(db, key, "evidence"),
    read(db, key, "authority"),
    read(db, key, "outbox"),
  ];
}

/** The publication's own calls: what `writePublication` makes, in order. */
async function publicationCalls(env, key, beforeSnapshot = async () => {}) {
  const db = env.DB;
  const at = new Date().toISOString();
  await db.batch([
    ...aggregateReads(db, key),
    read(db, key, "publication"),
    read(db, key, "event"),
    read(db, key, "manifest"),
  ]);
  await db.batch([step(db, key, "publication", at), read(db, key, "publication")]);
  await beforeSnapshot(at);
  await env.KV.put(`snapshot:${key}`, VALUE, { metadata: { at } });
  await Promise.all([
    env.KV.put(`history:${key}:${at}`, VALUE, { metadata: { at } }),
    env.KV.put(`feed:${key}:${at}`, VALUE, { metadata: { at } }),
  ]);
  await db.batch([
    db.prepare("UPDATE baseline_steps SET at = ? WHERE row_id = ? AND kind = 'publication'").bind(at, key),
    db.prepare("UPDATE baseline_steps SET at = ? WHERE row_id = ? AND kind = 'publication'").bind(at, key),
    db.prepare("DELETE FROM baseline_steps WHERE row_id = ? AND kind = 'outbox'").bind(key),
  ]);
}

/** The request's own calls before publication; returns the key the publication is about. */
async function requestCalls(route, db) {
  const at = new Date().toISOString();
  if (route === "create") {
    const key = crypto.randomUUID();
    await db.prepare("SELECT 1 FROM baseline_rows WHERE organisation_id = ? LIMIT 1").bind("org_bench").first();
    await db.batch([
      db.prepare("INSERT INTO baseline_rows (id, created_at) VALUES (?, ?)").bind(key, at),
      step(db, key, "event", at),
      step(db, key, "outbox", at),
      ...aggregateReads(db, key),
    ]);
    return key;
  }
  const rowid = 1 + (next++ % POOL);
  const row = await db.prepare("SELECT id, record_version FROM baseline_rows WHERE rowid = ?").bind(rowid).first();
  const key = row.id;
  const change = [
    db
      .prepare(
        "UPDATE baseline_rows SET display_name = ?, record_version = record_version + 1, updated_at = ? WHERE id = ? AND record_version = ?",
      )
      .bind(`Renamed ${next}`, at, key, row.record_version),
  ];
  if (route === "binding") {
    await Promise.all([
      read(db, key, "binding").first(),
      db.batch([read(db, key, "binding"), read(db, key, "binding")]),
    ]);
    change.push(step(db, key, "binding", at));
  }
  await db.batch([...change, step(db, key, "event", at), step(db, key, "outbox", at), ...aggregateReads(db, key)]);
  return key;
}

const ROUTES = new Set(["create", "update", "state", "binding"]);

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const route = url.pathname.slice(1);
    if (!ROUTES.has(route)) return new Response("unknown route", { status: 404 });
    const key = await requestCalls(route, env.DB);
    if (url.searchParams.has("platform")) await env.SEQUENCER.getByName(key).publish(key);
    else await publicationCalls(env, key);
    return Response.json({ id: key }, { status: route === "create" ? 201 : 200 });
  },
};

/** Stands in for the publication sequencer: the same publication calls, from a per-row object. */
export class Sequencer extends DurableObject {
  async publish(key) {
    await publicationCalls(this.env, key, (at) => this.env.LOG.getByName("log").append({ key, at }));
    await this.env.PURGE.purge(key);
    const dueAt = Date.now() + 60_000;
    await this.ctx.storage.put("second-purge", { key, dueAt });
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(dueAt);
    return { key };
  }

  alarm() {}
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

/** Stands in for the resolver's purge entry point. */
export class Purge extends WorkerEntrypoint {
  purge(key) {
    return { purged: key };
  }
}
