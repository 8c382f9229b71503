import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema.ts";

export type Database = ReturnType<typeof database>;

export function database(d1: D1Database) {
  return drizzle(d1, { schema });
}

/** A new row id: `prefix` and 20 random hex digits, e.g. `ev_3f9c…` (docs/storage.md). */
export function randomId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
}
