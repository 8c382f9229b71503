import { fillPlaceholders, type Query } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "./client.ts";

/** A drizzle query builder that can be prepared: its SQL built once, its rows mapped by drizzle. */
export interface Preparable {
  prepare(): { getQuery(): Query; mapResult(response: unknown, isFromBatch?: boolean): unknown };
}

/** What each builder of `B` resolves to when awaited: what drizzle's `db.batch` answers for it. */
export type Results<B extends readonly unknown[]> = { -readonly [K in keyof B]: Awaited<B[K]> };

/**
 * Statements built once per database instead of once per request. A write's hot path sends the
 * same few statements keyed by a passport id many times (the aggregate twice per write, the
 * publication's reads and records once); what varies between them is only the parameters, so the
 * SQL is built once and not again per request (scripts/bench/README.md measures it). `build` writes them with
 * drizzle's builder and `sql.placeholder(...)` for their parameters; drizzle still maps the rows,
 * as its own batch does. A placeholder standing for a column's value is encoded by that column
 * (a JSON column takes the value itself, not its text); one inside a `sql` template is bound as
 * given.
 */
export interface PreparedStatements<B extends readonly Preparable[]> {
  /** The D1 statements bound to `values` (one per read, for a batch). */
  bind(db: Database, values: Record<string, unknown>): D1PreparedStatement[];
  /** The batch's answers to those statements, mapped as `db.batch` would map them. */
  map(db: Database, responses: readonly D1Result[]): Results<B>;
}

export function preparedStatements<const B extends readonly Preparable[]>(
  build: (db: Database) => B,
): PreparedStatements<B> {
  const built = new WeakMap<
    Database,
    { queries: ReturnType<Preparable["prepare"]>[]; statements: D1PreparedStatement[] }
  >();
  const of = (db: Database) => {
    let entry = built.get(db);
    if (!entry) {
      const queries = build(db).map((builder) => builder.prepare());
      entry = { queries, statements: queries.map((query) => db.$client.prepare(query.getQuery().sql)) };
      built.set(db, entry);
    }
    return entry;
  };
  return {
    bind(db, values) {
      const { queries, statements } = of(db);
      return statements.map((statement, i) =>
        statement.bind(...fillPlaceholders((queries[i] as (typeof queries)[number]).getQuery().params, values)),
      );
    },
    map(db, responses) {
      const { queries } = of(db);
      return queries.map((query, i) => query.mapResult(responses[i], true)) as unknown as Results<B>;
    },
  };
}

/**
 * Sends drizzle-built statements whose answers are not needed (a change's writes) and `then`
 * statements (prepared reads) in one batch, one transaction, and answers the `then` statements'
 * results.
 */
export async function batchThen(
  db: Database,
  statements: readonly BatchItem<"sqlite">[],
  then: readonly D1PreparedStatement[],
): Promise<D1Result[]> {
  const d1 = db.$client;
  // Built as drizzle's own batch builds any batch item (a query builder or `db.run(sql)`).
  const first = statements.map((statement) => {
    const { sql, params } = (statement as unknown as { _prepare(): { getQuery(): Query } })._prepare().getQuery();
    return d1.prepare(sql).bind(...params);
  });
  const results = await d1.batch([...first, ...then]);
  return results.slice(first.length);
}
