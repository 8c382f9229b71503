// Benchmark baseline for create-and-publish: the storage floor of a write that is published, one
// D1 insert and one KV put of a 1 KB value, with no authentication, validation or signing.
const VALUE = JSON.stringify({ padding: "x".repeat(1000) });

export default {
  async fetch(_request, env) {
    const id = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO baseline_rows (id, created_at) VALUES (?, ?)")
      .bind(id, new Date().toISOString())
      .run();
    await env.KV.put(`row:${id}`, VALUE);
    return Response.json({ id }, { status: 201 });
  },
};
