import { getTableName } from "drizzle-orm";
import type { Database } from "./client.ts";
import {
  type ListFilter,
  name,
  PASSPORTS,
  type PageStatement,
  type PassportSummaryRow,
  pageConditions,
  readPage,
  SUMMARY_KEYS,
  SUMMARY_SELECT,
} from "./passports.ts";
import { passportSearch, passportSearchKeys, passports } from "./schema.ts";

/** The most words of a search text that are searched for; more only narrow a page already found. */
const MAX_SEARCH_WORDS = 8;

/**
 * The words of a search text as FTS5 tokenises them (unicode61: letters and digits, lower case),
 * at most MAX_SEARCH_WORDS. Every word is matched as a prefix of a word in the passport's terms.
 */
export function searchWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_SEARCH_WORDS);
}

/** The FTS5 token that names an organisation in `passport_search.scope` (migration 0011). */
function scopeToken(organisationId: string): string {
  const hex = [...new TextEncoder().encode(organisationId)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `o${hex}`;
}

/**
 * An FTS5 query for `words` inside one organisation. Words are letters and digits only, so quoting
 * them leaves no FTS5 syntax a caller could inject.
 */
function matchExpression(organisationId: string, words: string[]): string {
  return `scope : "${scopeToken(organisationId)}" AND terms : (${words.map((w) => `"${w}"*`).join(" AND ")})`;
}

export type SearchRow = PassportSummaryRow & { seq: number };

const SEARCH = `"${getTableName(passportSearch)}"`;
const KEYS = `"${getTableName(passportSearchKeys)}"`;

/**
 * One organisation's search page in creation order (`seq`), as SQL and parameters. FTS5 walks the
 * matching rows in rowid order from the cursor and stops after `limit`, so a page costs the same at
 * any table size when the words are common; rare words cost their own short posting lists. Filters
 * narrow the rows the walk finds. `organisation_id` is compared as well as the scope token, so a
 * second organisation's passports can never match. Plain SQL for the same reason as the list page
 * (`listPageStatement`).
 */
export function searchPageStatement(
  organisationId: string,
  words: string[],
  filter: Omit<ListFilter, "organisationIds" | "after"> & { after?: number },
): PageStatement {
  const { conditions, params } = pageConditions(organisationId, filter);
  const seq = `${KEYS}.${name(passportSearchKeys.seq)}`;
  const where = [`${SEARCH} MATCH ?`, ...(filter.after !== undefined ? [`${SEARCH}.rowid > ?`] : []), ...conditions];
  return {
    sql: `SELECT ${SUMMARY_SELECT}, ${seq} AS "seq" FROM ${SEARCH}
      JOIN ${KEYS} ON ${seq} = ${SEARCH}.rowid
      JOIN ${PASSPORTS} ON ${PASSPORTS}.${name(passports.id)} = ${KEYS}.${name(passportSearchKeys.passportId)}
      WHERE ${where.join(" AND ")} ORDER BY ${SEARCH}.rowid LIMIT ?`,
    params: [
      matchExpression(organisationId, words),
      ...(filter.after !== undefined ? [filter.after] : []),
      ...params,
      filter.limit,
    ],
  };
}

const SEARCH_KEYS = [...SUMMARY_KEYS, "seq"];

/** One search page over the given organisations (one statement each, one batch), in `seq` order. */
export function searchPassports(
  db: Database,
  words: string[],
  filter: Omit<ListFilter, "after"> & { after?: number },
): Promise<SearchRow[]> {
  const statements = filter.organisationIds.map((organisationId) => searchPageStatement(organisationId, words, filter));
  return readPage<SearchRow>(db, statements, SEARCH_KEYS, (a, b) => a.seq - b.seq, filter.limit);
}
