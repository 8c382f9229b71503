// Benchmark baseline for listing: the storage floor of one page, a D1 query for the first 50 rows
// of a 10,000-row table in (created_at, id) order, returned as JSON.
export default {
  async fetch(_request, env) {
    const { results } = await env.DB.prepare(
      "SELECT * FROM baseline_rows WHERE organisation_id = ? ORDER BY created_at, id LIMIT 51",
    )
      .bind("org_bench")
      .all();
    return Response.json({ items: results.slice(0, 50) });
  },
};
