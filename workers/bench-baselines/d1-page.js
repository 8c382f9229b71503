// Benchmark baseline for listing: the storage floor of one page, a D1 query for 50 rows of the
// baseline table in (created_at, id) order, returned as JSON. `?environment=` filters (an index
// matches it), `?after=<created_at>,<id>` starts after that row (a page deep in the list).
export default {
  async fetch(request, env) {
    const query = new URL(request.url).searchParams;
    const environment = query.get("environment");
    const after = query.get("after")?.split(",");
    const conditions = ["organisation_id = ?"];
    const values = ["org_bench"];
    if (environment) {
      conditions.push("environment = ?");
      values.push(environment);
    }
    if (after) {
      conditions.push("(created_at, id) > (?, ?)");
      values.push(...after);
    }
    const { results } = await env.DB.prepare(
      `SELECT * FROM baseline_rows WHERE ${conditions.join(" AND ")} ORDER BY created_at, id LIMIT 51`,
    )
      .bind(...values)
      .all();
    return Response.json({ items: results.slice(0, 50) });
  },
};
