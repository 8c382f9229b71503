// Benchmark reference for create-and-publish: only the storage calls a published create makes
// (docs/publication.md, "Round trips per write"), in the same order, with no authentication,
// validation, signing, Durable Object hop, log append or purge. Its req/s against the one insert
// and one put of d1-write-kv-put.js is the most a create could reach while it publishes the
// snapshot, history entry and feed entry before it answers.
const VALUE = JSON.stringify({ padding: "x".repeat(1000) });

export default {
  async fetch(_request, env) {
    const id = crypto.randomUUID();
    const at = new Date().toISOString();
    const step = (kind) =>
      env.DB.prepare("INSERT INTO baseline_steps (row_id, kind, at) VALUES (?, ?, ?)").bind(id, kind, at);
    const row = env.DB.prepare("SELECT * FROM baseline_rows WHERE id = ?").bind(id);
    // The caller's membership.
    await env.DB.prepare("SELECT 1 FROM baseline_rows WHERE organisation_id = ? LIMIT 1").bind("org_bench").first();
    // The change, its history event and outbox row, read back.
    await env.DB.batch([
      env.DB.prepare("INSERT INTO baseline_rows (id, created_at) VALUES (?, ?)").bind(id, at),
      step("event"),
      step("outbox"),
      row,
    ]);
    // The publisher reads what it publishes and the last publication, then records the new one.
    await env.DB.batch([
      row,
      env.DB.prepare("SELECT * FROM baseline_steps WHERE row_id = ? AND kind = 'publication'").bind(id),
    ]);
    await env.DB.batch([step("publication"), env.DB.prepare("SELECT last_insert_rowid()")]);
    // The snapshot first, then the history and feed entries together.
    await env.KV.put(`snapshot:${id}`, VALUE, { metadata: { at } });
    await Promise.all([
      env.KV.put(`history:${id}`, VALUE, { metadata: { at } }),
      env.KV.put(`feed:${id}`, VALUE, { metadata: { at } }),
    ]);
    // The publication recorded as written and the outbox row cleared.
    await env.DB.batch([
      env.DB.prepare("UPDATE baseline_steps SET at = ? WHERE row_id = ? AND kind = 'publication'").bind(at, id),
      env.DB.prepare("DELETE FROM baseline_steps WHERE row_id = ? AND kind = 'outbox'").bind(id),
    ]);
    return Response.json({ id }, { status: 201 });
  },
};
