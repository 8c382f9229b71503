// Benchmark baseline for listing: the storage floor of one page, a D1 query for 50 rows of the
// baseline table in (created_at, id) order, returned as JSON. `?environment=` filters (an index
// matches it), `?after=<created_at>,<id>` starts after that row (a page deep in the list).
// `?q=<word>` is the floor of a search page: the same FTS5 query shape as the control plane's
// (the organisation's scope token and the word as a prefix, walked in rowid order, joined to the
// rows) over an FTS5 table of the same rows (`baseline_search`), 50 rows of it.
const SCOPE = `o${[...new TextEncoder().encode("org_bench")].map((b) => b.toString(16).padStart(2, "0")).join("")}`;

export default {
  async fetch(request, env) {
    const query = new URL(request.url).searchParams;
    const word = query.get("q");
    if (word) {
      const { results } = await env.DB.prepare(
        `SELECT baseline_rows.*, baseline_search.rowid AS seq FROM baseline_search
         JOIN baseline_rows ON baseline_rows.rowid = baseline_search.rowid
         WHERE baseline_search MATCH ? AND baseline_rows.organisation_id = ? ORDER BY baseline_search.rowid LIMIT 51`,
      )
        .bind(`scope : "${SCOPE}" AND terms : ("${word}"*)`, "org_bench")
        .all();
      return Response.json({ items: results.slice(0, 50) });
    }
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
