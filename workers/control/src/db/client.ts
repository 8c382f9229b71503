import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema.ts";

export type Database = ReturnType<typeof connect>;

function connect(d1: D1Database) {
  return drizzle(d1, { schema });
}

// drizzle() walks the whole schema to build its relational config, the same for every request, so
// it is done once per binding, not per request. The instance holds no per-request state,
// and workerd hands every request of an isolate the same binding object: one instance per binding.
const instances = new WeakMap<D1Database, Database>();

export function database(d1: D1Database): Database {
  let db = instances.get(d1);
  if (!db) {
    db = connect(d1);
    instances.set(d1, db);
  }
  return db;
}

/** The message SQLite gives a UNIQUE (or primary key) violation. */
export const UNIQUE_VIOLATION = "UNIQUE constraint failed";

/**
 * Whether a statement failed with a message naming `marker`: a constraint's message, or the name a
 * trigger of ours raises. drizzle wraps D1's error, so its `cause` is read when there is one.
 */
export function isConstraintError(error: unknown, marker: string): boolean {
  return String((error as { cause?: unknown })?.cause ?? error).includes(marker);
}

/**
 * What D1 answers a write with once the database is at its size limit (10 GB, which cannot be
 * raised; docs/platform-model.md, D1). The write, or the whole batch, is not applied; reads work.
 */
const DATABASE_FULL = "Exceeded maximum DB size";

/** Whether a statement failed because the database is at its size limit. */
export function isDatabaseFull(error: unknown): boolean {
  return isConstraintError(error, DATABASE_FULL);
}

/** A new row id: `prefix` and 20 random hex digits, e.g. `ev_3f9c…` (docs/storage.md). */
export function randomId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
}
