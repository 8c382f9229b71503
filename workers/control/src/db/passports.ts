import { and, asc, eq, getTableName, gt, inArray, isNull, ne, or, type Placeholder, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type Database, isConstraintError } from "./client.ts";
import { bindingWithValueRead } from "./passport-entries.ts";
import { batchThen, type Preparable, type PreparedStatements, preparedStatements, type Results } from "./prepared.ts";
import { authority, bindings, events, evidence, members, organisations, outbox, passports } from "./schema.ts";
import { usesOfQuery } from "./uses.ts";

export type PassportRow = typeof passports.$inferSelect;

export interface NewPassport {
  id: string;
  organisationId: string;
  family: "api" | "agent";
  displayName?: string;
  environment?: string;
  version?: string;
  bindings: Pick<typeof bindings.$inferInsert, "class" | "value" | "label" | "environment" | "version">[];
  distinctReason?: string;
  /** The revoked or retired passport of the organisation this one follows (a marketplace re-subscription). */
  follows?: string;
  actor: string;
  at: string;
}

/** The statements that create a passport, its history event and its pending publication. */
export function createPassportStatements(db: Database, input: NewPassport) {
  const passportInsert = db.insert(passports).values({
    id: input.id,
    organisationId: input.organisationId,
    family: input.family,
    displayName: input.displayName,
    environment: input.environment,
    version: input.version,
    distinctReason: input.distinctReason,
    stateAsOf: input.at,
    createdAt: input.at,
    updatedAt: input.at,
  });
  const bindingInserts = input.bindings.map((binding) =>
    db.insert(bindings).values({
      id: crypto.randomUUID(),
      passportId: input.id,
      class: binding.class,
      value: binding.value,
      label: binding.label,
      environment: binding.environment,
      version: binding.version,
      boundAt: input.at,
    }),
  );
  return [
    passportInsert,
    ...bindingInserts,
    db.insert(events).values({
      passportId: input.id,
      organisationId: input.organisationId,
      actor: input.actor,
      at: input.at,
      kind: "passport.created",
      detail: {
        family: input.family,
        bindings: input.bindings.map((b) => ({ class: b.class, value: b.value })),
        ...(input.distinctReason ? { distinct_object_reason: input.distinctReason } : {}),
        ...(input.follows ? { follows: input.follows } : {}),
      },
      recordVersion: 1,
    }),
    enqueuePublication(db, input.id, 1, input.at),
  ] as const;
}

/** Records that `passportId` owes a publication of `recordVersion` (coalescing with any pending one). */
function enqueuePublication(db: Database, passportId: string, recordVersion: number, at: string) {
  return db
    .insert(outbox)
    .values({ passportId, recordVersion, nextAttemptAt: at })
    .onConflictDoUpdate({ target: outbox.passportId, set: { recordVersion, nextAttemptAt: at, attempts: 0, bulk: 0 } });
}

/** The publication a passport still owes the resolver (its outbox row), if any. */
function pendingPublicationQuery(db: Database, passportId: string | Placeholder) {
  return db
    .select({ recordVersion: outbox.recordVersion, nextAttemptAt: outbox.nextAttemptAt })
    .from(outbox)
    .where(eq(outbox.passportId, passportId));
}

/** The publication a passport still owes the resolver, if any. */
export async function pendingPublication(db: Database, passportId: string) {
  const [pending] = await pendingPublicationQuery(db, passportId);
  return pending;
}

export async function findPassport(db: Database, id: string): Promise<PassportRow | undefined> {
  return db.query.passports.findFirst({ where: eq(passports.id, id) });
}

/** The passport `id` with `subject`'s membership in its organisation, in one query; none when either is missing. */
export async function passportWithMembership(db: Database, subject: string, id: string) {
  const [row] = await db
    .select({ passport: passports, role: members.role })
    .from(passports)
    .innerJoin(members, and(eq(members.organisationId, passports.organisationId), eq(members.subject, subject)))
    .where(eq(passports.id, id));
  return row && { passport: row.passport, membership: { organisationId: row.passport.organisationId, role: row.role } };
}

/**
 * The reads everything a passport's view and public record are projected from: the passport, its
 * organisation and that one's parent, bindings, current evidence, authority and the publication it
 * still owes. Each is keyed by the identity id alone (the placeholder `id`), so they go in one
 * batch (one round trip, one snapshot), also behind the statements of a change (`commitChange`).
 * Built once per database (`preparedStatements`): every write reads them twice.
 */
const aggregateReads = preparedStatements((db) => {
  const id = sql.placeholder("id");
  const organisationOf = db.select({ id: passports.organisationId }).from(passports).where(eq(passports.id, id));
  const operatorOf = db.select({ id: passports.operatorOrganisationId }).from(passports).where(eq(passports.id, id));
  const parentOf = db
    .select({ id: organisations.parentId })
    .from(organisations)
    .where(inArray(organisations.id, organisationOf));
  return [
    db.select().from(passports).where(eq(passports.id, id)),
    // The responsible organisation and, when there is one, the separate operator: one read for both.
    db
      .select()
      .from(organisations)
      .where(or(inArray(organisations.id, organisationOf), inArray(organisations.id, operatorOf))),
    db.select().from(organisations).where(inArray(organisations.id, parentOf)),
    db
      .select()
      .from(bindings)
      .where(eq(bindings.passportId, id))
      .orderBy(asc(bindings.boundAt), asc(bindings.class), asc(bindings.value)),
    db
      .select()
      .from(evidence)
      .where(and(eq(evidence.passportId, id), isNull(evidence.withdrawnAt)))
      .orderBy(asc(evidence.observedAt), asc(evidence.id)),
    db
      .select()
      .from(authority)
      .where(eq(authority.passportId, id))
      .orderBy(asc(authority.createdAt), asc(authority.id)),
    pendingPublicationQuery(db, id),
    // Agent uses links (docs/reciprocal-trust.md), with each target's name and lifecycle for the view.
    usesOfQuery(db, id),
  ] as const;
});

type AggregateResults = ReturnType<typeof aggregateReads.map>;

function toAggregate(
  id: string,
  [[passport], named, [parent], boundList, evidenceList, authorityList, [pending], uses]: AggregateResults,
) {
  if (!passport) return undefined;
  const organisation = named.find((o) => o.id === passport.organisationId);
  if (!organisation) throw new Error(`passport ${id} has no organisation`);
  const operator = passport.operatorOrganisationId
    ? named.find((o) => o.id === passport.operatorOrganisationId)
    : undefined;
  return {
    passport,
    organisation,
    parent,
    operator,
    bindings: boundList,
    evidence: evidenceList,
    authority: authorityList,
    pending,
    uses,
  };
}

export type StoredPassport = NonNullable<ReturnType<typeof toAggregate>>;

/** Everything the public record is projected from, read from D1 (never from the resolver), in one round trip. */
export async function loadAggregate(db: Database, id: string): Promise<StoredPassport | undefined> {
  const responses = await db.$client.batch(aggregateReads.bind(db, { id }));
  return toAggregate(id, aggregateReads.map(db, responses));
}

/**
 * The aggregate and the results of `extra` reads keyed by the same passport (`id` and the
 * placeholder values `values`), in one round trip.
 */
export async function loadAggregateWith<B extends readonly Preparable[]>(
  db: Database,
  id: string,
  extra: PreparedStatements<B>,
  values: Record<string, unknown>,
): Promise<[StoredPassport | undefined, Results<B>]> {
  const reads = aggregateReads.bind(db, { id });
  const responses = await db.$client.batch([...reads, ...extra.bind(db, values)]);
  return [
    toAggregate(id, aggregateReads.map(db, responses.slice(0, reads.length))),
    extra.map(db, responses.slice(reads.length)),
  ];
}

/**
 * Commits `statements` (one transaction) and reads the passport's aggregate as they left it, in
 * the same round trip.
 */
export async function commitAndLoad(
  db: Database,
  id: string,
  statements: readonly BatchItem<"sqlite">[],
): Promise<StoredPassport> {
  const stored = toAggregate(
    id,
    aggregateReads.map(db, await batchThen(db, statements, aggregateReads.bind(db, { id }))),
  );
  if (!stored) throw new Error(`passport ${id} vanished`);
  return stored;
}

/** A material change to one passport: its own statements plus what it sets on the passport row. */
export interface PassportChange {
  kind: string;
  detail: Record<string, unknown>;
  statements?: BatchItem<"sqlite">[];
  set?: Partial<typeof passports.$inferInsert>;
}

/**
 * The statements that commit `change` as the passport's next record version: the change itself,
 * the version bump (guarded on the version the caller read), the history event and the pending
 * publication. Events are unique per (passport, version), so if another writer committed that
 * version first the whole batch fails and rolls back.
 */
export function commitChangeStatements(
  db: Database,
  current: PassportRow,
  change: PassportChange,
  actor: string,
  at: string,
): [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]] {
  const next = current.recordVersion + 1;
  return [
    db
      .update(passports)
      .set({ ...change.set, recordVersion: next, updatedAt: at })
      .where(and(eq(passports.id, current.id), eq(passports.recordVersion, current.recordVersion))),
    ...(change.statements ?? []),
    db.insert(events).values({
      passportId: current.id,
      organisationId: change.set?.organisationId ?? current.organisationId,
      actor,
      at,
      kind: change.kind,
      detail: change.detail,
      recordVersion: next,
    }),
    enqueuePublication(db, current.id, next, at),
  ];
}

/**
 * Active passports of `family` in `organisationId` that already carry the binding
 * `bindingClass`=`value` (duplicate governance, spec 1.6).
 */
/**
 * Whether a write was stopped by the database's duplicate rule (migration 0007): a primary binding
 * already held by another operative passport of the same family in the organisation.
 */
export function isDuplicateIdentityViolation(error: unknown): boolean {
  return isConstraintError(error, "duplicate-identity");
}

export function passportsWithBinding(
  db: Database,
  organisationId: string,
  family: PassportRow["family"],
  bindingClass: string,
  values: string[],
) {
  return db
    .select({ id: passports.id, value: bindings.value })
    .from(bindings)
    .innerJoin(passports, eq(bindings.passportId, passports.id))
    .where(
      and(
        // Unary + keeps SQLite from walking the organisation's passports by index: the few bindings
        // with this class and value (bindings_class_value) are the place to start, at any size.
        sql`+${passports.organisationId} = ${organisationId}`,
        eq(passports.family, family),
        ne(passports.lifecycle, "retired"),
        eq(bindings.class, bindingClass),
        inArray(bindings.value, values),
      ),
    );
}

/**
 * The two reads of who holds a primary binding value already: operative passports of the family in
 * the organisation (`passportsWithBinding`), and verified holders elsewhere
 * (`verifiedHoldersElsewhere`), for a batch that may carry other reads of the same request.
 */
function primaryBindingHolderReads(
  db: Database,
  organisationId: string,
  family: PassportRow["family"],
  bindingClass: string,
  values: string[],
  now: string,
) {
  return [
    passportsWithBinding(db, organisationId, family, bindingClass, values),
    verifiedHoldersElsewhere(db, organisationId, bindingClass, values, now),
  ] as const;
}

/**
 * A binding add's reads, in one round trip: the passport's binding with this class and value, if
 * it has one, and who holds the value already (`primaryBindingHolderReads`).
 */
export async function bindingAndPrimaryHolders(
  db: Database,
  request: {
    passportId: string;
    organisationId: string;
    family: PassportRow["family"];
    binding: { class: string; value: string };
    now: string;
  },
) {
  const { passportId, organisationId, family, binding, now } = request;
  const [[existing], inOrganisation, elsewhere] = await db.batch([
    bindingWithValueRead(db, passportId, binding),
    ...primaryBindingHolderReads(db, organisationId, family, binding.class, [binding.value], now),
  ]);
  return { existing, inOrganisation, elsewhere };
}

/** Who holds a primary binding value already (`primaryBindingHolderReads`), in one round trip. */
export async function primaryBindingHolders(
  db: Database,
  organisationId: string,
  family: PassportRow["family"],
  bindingClass: string,
  values: string[],
  now: string,
) {
  const [inOrganisation, elsewhere] = await db.batch(
    primaryBindingHolderReads(db, organisationId, family, bindingClass, values, now),
  );
  return { inOrganisation, elsewhere };
}

/**
 * Operative passports of other organisations whose `bindingClass`=`value` binding is verified and
 * still fresh at `now`: the holders that have proven control of the value.
 */
export function verifiedHoldersElsewhere(
  db: Database,
  organisationId: string,
  bindingClass: string,
  values: string[],
  now: string,
) {
  return db
    .select({ id: passports.id, organisationId: passports.organisationId, value: bindings.value })
    .from(bindings)
    .innerJoin(passports, eq(bindings.passportId, passports.id))
    .where(
      and(
        ne(passports.organisationId, organisationId),
        ne(passports.lifecycle, "retired"),
        eq(bindings.class, bindingClass),
        inArray(bindings.value, values),
        // As above: start from the class and value, not from every verified binding.
        sql`+${bindings.verificationState} = 'verified'`,
        gt(bindings.verificationFreshUntil, now),
      ),
    );
}

export interface ListFilter {
  organisationIds: string[];
  /** When set, a page is returned only from organisations this subject is a member of (checked in the same query). */
  memberSubject?: string;
  family?: PassportRow["family"];
  lifecycle?: PassportRow["lifecycle"];
  environment?: string;
  after?: { createdAt: string; id: string };
  limit: number;
}

/** The columns a list item shows (`passportSummary`), nothing more. */
const summaryColumns = {
  id: passports.id,
  organisationId: passports.organisationId,
  family: passports.family,
  displayName: passports.displayName,
  lifecycle: passports.lifecycle,
  availability: passports.availability,
  environment: passports.environment,
  version: passports.version,
  recordVersion: passports.recordVersion,
  createdAt: passports.createdAt,
  updatedAt: passports.updatedAt,
};

export type PassportSummaryRow = Pick<PassportRow, keyof typeof summaryColumns>;

/** A quoted SQL name. */
export const name = (column: { name: string }) => `"${column.name}"`;
export const PASSPORTS = `"${getTableName(passports)}"`;
const MEMBERS = `"${getTableName(members)}"`;

/** The summary columns, each under its property name, so D1's rows are summary rows as they come. */
export const SUMMARY_SELECT = Object.entries(summaryColumns)
  .map(([property, column]) => `${PASSPORTS}.${name(column)} AS "${property}"`)
  .join(", ");

/** A page's SQL and its parameters, for `D1Database.prepare(sql).bind(...params)`. */
export interface PageStatement {
  sql: string;
  params: (string | number)[];
}

/**
 * The conditions a list page and a search page of one organisation share, as SQL on `passports`:
 * the organisation, the caller's membership in it (checked in the same statement), and the filters.
 */
export function pageConditions(
  organisationId: string,
  filter: Omit<ListFilter, "organisationIds" | "limit" | "after">,
): { conditions: string[]; params: (string | number)[] } {
  const conditions = [`${PASSPORTS}.${name(passports.organisationId)} = ?`];
  const params: (string | number)[] = [organisationId];
  if (filter.memberSubject) {
    conditions.push(
      `exists (select 1 from ${MEMBERS} where ${MEMBERS}.${name(members.organisationId)} = ? and ${MEMBERS}.${name(members.subject)} = ?)`,
    );
    params.push(organisationId, filter.memberSubject);
  }
  for (const [column, value] of [
    [passports.family, filter.family],
    [passports.lifecycle, filter.lifecycle],
    [passports.environment, filter.environment],
  ] as const) {
    if (value === undefined) continue;
    conditions.push(`${PASSPORTS}.${name(column)} = ?`);
    params.push(value);
  }
  return { conditions, params };
}

/**
 * One organisation's page in (created_at, id) order, as SQL and parameters. The organisation and
 * each single filter have an index ending in (created_at, id) (migrations 0000 and 0011), and the
 * cursor is a row-value comparison, so SQLite seeks to the cursor and reads `limit` rows: a page
 * costs the same at any depth and table size (test/control/list-plans.test.ts checks the plans).
 * Written as SQL, not with drizzle's builder: every list request would otherwise build the same
 * query anew and map each row through it (scripts/bench/README.md measures it); the names still
 * come from the schema.
 */
export function listPageStatement(organisationId: string, filter: Omit<ListFilter, "organisationIds">): PageStatement {
  const { conditions, params } = pageConditions(organisationId, filter);
  if (filter.after) {
    conditions.push(`(${PASSPORTS}.${name(passports.createdAt)}, ${PASSPORTS}.${name(passports.id)}) > (?, ?)`);
    params.push(filter.after.createdAt, filter.after.id);
  }
  params.push(filter.limit);
  return {
    sql: `SELECT ${SUMMARY_SELECT} FROM ${PASSPORTS} WHERE ${conditions.join(" AND ")} ORDER BY ${name(passports.createdAt)}, ${name(passports.id)} LIMIT ?`,
    params,
  };
}

export const byCreation = (a: PassportSummaryRow, b: PassportSummaryRow) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** The summary row's properties, in the order SUMMARY_SELECT selects them. */
export const SUMMARY_KEYS: readonly string[] = Object.keys(summaryColumns);

/**
 * One page over one or more organisations: each organisation's page statement, its rows as
 * objects with `keys` (the statement's columns, in order). One statement alone is read with
 * `raw()`, because `all()` builds every row as an object through Object.fromEntries, and the keys
 * here already name the columns; several go in one batch (one round trip), and their
 * rows are merged in `order` and cut to `limit`.
 */
export async function readPage<R>(
  db: Database,
  statements: PageStatement[],
  keys: readonly string[],
  order: (a: R, b: R) => number,
  limit: number,
): Promise<R[]> {
  const d1 = db.$client;
  const prepared = statements.map(({ sql, params }) => d1.prepare(sql).bind(...params));
  const [first, ...rest] = prepared;
  if (!first) return [];
  if (rest.length > 0) {
    const pages = await d1.batch<R>([first, ...rest]);
    return pages
      .flatMap((page) => page.results)
      .sort(order)
      .slice(0, limit);
  }
  return (await first.raw<unknown[]>()).map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) row[keys[i] as string] = values[i];
    return row as R;
  });
}

/**
 * One page of passports in stable (created_at, id) order: one statement for one organisation;
 * for several, one statement per organisation in one batch (one round trip), merged here.
 */
export function listPassports(db: Database, filter: ListFilter): Promise<PassportSummaryRow[]> {
  const statements = filter.organisationIds.map((organisationId) => listPageStatement(organisationId, filter));
  return readPage(db, statements, SUMMARY_KEYS, byCreation, filter.limit);
}

/**
 * A passport's history in D1, oldest first, after event sequence `afterSeq` (one statement, also
 * usable in a batch). What has left D1 is read by `historyEvents` (history/pages.ts).
 */
export function historyOf(db: Database, passportId: string, afterSeq: number, limit: number) {
  return db
    .select()
    .from(events)
    .where(and(eq(events.passportId, passportId), gt(events.seq, afterSeq)))
    .orderBy(asc(events.seq))
    .limit(limit);
}
