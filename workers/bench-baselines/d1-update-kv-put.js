// Benchmark baseline for a change that is published (PATCH, state change): the storage floor, one
// guarded D1 update of a row picked in turn out of the first 1,000 and one KV put of a 1 KB value,
// with no authentication, validation, history or signing.
const VALUE = JSON.stringify({ padding: "x".repeat(1000) });
let next = 0;

export default {
  async fetch(_request, env) {
    const row = 1 + (next++ % 1000);
    const { meta } = await env.DB.prepare(
      "UPDATE baseline_rows SET display_name = ?, record_version = record_version + 1, updated_at = ? WHERE rowid = ?",
    )
      .bind(`Renamed ${next}`, new Date().toISOString(), row)
      .run();
    await env.KV.put(`row:${row}`, VALUE);
    return Response.json({ changed: meta.changes }, { status: 200 });
  },
};
