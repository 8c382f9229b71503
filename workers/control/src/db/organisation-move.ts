import type { Shards } from "./shards.ts";

// Moving one organisation to another shard while the service runs (docs/sharding.md). Every row
// keeps its ids; only the organisation's own writes are refused, and only while it is fenced.

/**
 * The organisation's tables in the order their foreign keys allow inserting them, each with the
 * rows that are the organisation's. `renumbered` tables take the next `seq` of the target shard
 * (each shard numbers its own history), in their old order, so every entry is kept in sequence.
 * The search rows are not copied: the target's triggers write them when the passports and their
 * bindings arrive (migration 0011).
 */
const TABLES: { name: string; rows: string; order: string; renumbered?: true }[] = [
  { name: "organisations", rows: "id = ?1", order: "id" },
  { name: "members", rows: "organisation_id = ?1", order: "subject" },
  { name: "organisation_events", rows: "organisation_id = ?1", order: "seq", renumbered: true },
  { name: "passports", rows: "organisation_id = ?1", order: "created_at, id" },
  ...["bindings", "evidence", "authority"].map((name) => ({ name, rows: OF_PASSPORT("passport_id"), order: "id" })),
  { name: "passport_uses", rows: OF_PASSPORT("agent_id"), order: "agent_id, target_id" },
  { name: "events", rows: "organisation_id = ?1", order: "seq", renumbered: true },
  { name: "outbox", rows: OF_PASSPORT("passport_id"), order: "passport_id" },
  { name: "publications", rows: OF_PASSPORT("passport_id"), order: "seq", renumbered: true },
  { name: "published_manifests", rows: OF_PASSPORT("passport_id"), order: "passport_id, manifest_key" },
  { name: "history_archives", rows: OF_PASSPORT("passport_id"), order: "passport_id, first_seq" },
];

function OF_PASSPORT(column: string): string {
  return `${column} IN (SELECT id FROM passports WHERE organisation_id = ?1)`;
}

/** Statements per D1 batch while copying (each is one row's insert). */
const ROWS_PER_BATCH = 50;

export interface MoveReport {
  organisationId: string;
  from: number;
  to: number;
  /** Rows copied, per table. */
  rows: Record<string, number>;
  /** How long the organisation's writes were refused, in ms. */
  fencedMs: number;
}

/** Why a move was not made; the organisation is unfenced and where it was. */
export class MoveRefused extends Error {}

/**
 * Moves an organisation to shard `to`: fence it (directory, then its shard's fence row), copy
 * each table in order, check the counts, point the directory at the new shard and lift the fence
 * in one statement, then delete the old copy (its fence row stays there). A failure before the directory points at the new
 * shard removes the partial copy and lifts the fence, leaving the organisation where it was.
 */
export async function moveOrganisation(
  shards: Shards,
  organisationId: string,
  to: number,
  at = new Date(),
): Promise<MoveReport> {
  const directory = shards.directory;
  if (!directory) throw new MoveRefused("one shard: there is nowhere to move to");
  shards.shard(to);
  const fencedAt = Date.now();
  // One statement: an organisation with no row (shard 0 from before sharding) gets one, fenced.
  const fenced = await directory
    .prepare(
      `INSERT INTO organisation_shards (organisation_id, shard, moving_to, placed_at) VALUES (?1, 0, ?2, ?3)
       ON CONFLICT (organisation_id) DO UPDATE SET moving_to = excluded.moving_to
         WHERE moving_to IS NULL AND shard <> excluded.moving_to
       RETURNING shard`,
    )
    .bind(organisationId, to, at.toISOString())
    .first<{ shard: number }>();
  if (!fenced) throw new MoveRefused(`${organisationId} is already in shard ${to} or being moved`);
  const from = fenced.shard;
  if (from === to) {
    await unfence(directory, organisationId, to);
    throw new MoveRefused(`${organisationId} is already in shard ${to}`);
  }
  const source = shards.bindings[from] as D1Database;
  const target = shards.bindings[to] as D1Database;
  await source
    .prepare("INSERT INTO organisation_fences (organisation_id, fenced_at) VALUES (?1, ?2)")
    .bind(organisationId, at.toISOString())
    .run();
  // The target may hold the fence an earlier move out of it left (below).
  await target.prepare("DELETE FROM organisation_fences WHERE organisation_id = ?1").bind(organisationId).run();

  const rows: Record<string, number> = {};
  try {
    const organisation = await source.prepare("SELECT 1 FROM organisations WHERE id = ?1").bind(organisationId).first();
    if (!organisation) throw new MoveRefused(`${organisationId} is not in shard ${from}`);
    for (const table of TABLES) rows[table.name] = await copyTable(source, target, table, organisationId);
    await registerIdentities(source, directory, organisationId);
  } catch (error) {
    await deleteOrganisation(target, organisationId);
    await source.prepare("DELETE FROM organisation_fences WHERE organisation_id = ?1").bind(organisationId).run();
    await unfence(directory, organisationId, to);
    throw error;
  }

  // The switch: from here on the organisation is read and written in `to`.
  await directory
    .prepare(
      "UPDATE organisation_shards SET shard = moving_to, moving_to = NULL WHERE organisation_id = ?1 AND moving_to = ?2",
    )
    .bind(organisationId, to)
    .run();
  const fencedMs = Date.now() - fencedAt;
  // The old shard keeps the fence row: a write sent there on a cached answer from before the move
  // is refused, never written where nothing reads it (db/shards.ts, PLACEMENT_CACHE_MS).
  await deleteOrganisation(source, organisationId);
  return { organisationId, from, to, rows, fencedMs };
}

/**
 * Whether an organisation can be moved on its own: it has no parent and no sub-organisations, and
 * operates no other organisation's passport in its shard (rows a move would leave pointing at
 * nothing there; docs/sharding.md). One statement.
 */
export async function movableAlone(shards: Shards, organisationId: string): Promise<boolean> {
  const source = shards.bindings[(await shards.placementOf(organisationId)).shard] as D1Database;
  const tie = await source
    .prepare(
      `SELECT 1 AS tied FROM organisations WHERE id = ?1 AND parent_id IS NOT NULL
       UNION ALL SELECT 1 FROM organisations WHERE parent_id = ?1
       UNION ALL SELECT 1 FROM passports WHERE operator_organisation_id = ?1 AND organisation_id <> ?1
       LIMIT 1`,
    )
    .bind(organisationId)
    .first();
  return tie === null;
}

async function unfence(directory: D1Database, organisationId: string, to: number) {
  await directory
    .prepare("UPDATE organisation_shards SET moving_to = NULL WHERE organisation_id = ?1 AND moving_to = ?2")
    .bind(organisationId, to)
    .run();
}

/**
 * Records each of the organisation's identity ids in the directory, if it is not there yet (a
 * passport from before sharding), so the ids route to the organisation's new shard.
 */
async function registerIdentities(source: D1Database, directory: D1Database, organisationId: string) {
  const { results } = await source
    .prepare("SELECT id FROM passports WHERE organisation_id = ?1 ORDER BY id")
    .bind(organisationId)
    .all<{ id: string }>();
  const statements = results.map(({ id }) =>
    directory
      .prepare(
        "INSERT INTO identity_organisations (identity_id, organisation_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
      )
      .bind(id, organisationId),
  );
  for (let i = 0; i < statements.length; i += ROWS_PER_BATCH)
    await directory.batch(statements.slice(i, i + ROWS_PER_BATCH));
}

/** Copies one table's rows of the organisation, in batches; returns how many. */
async function copyTable(
  source: D1Database,
  target: D1Database,
  table: (typeof TABLES)[number],
  organisationId: string,
): Promise<number> {
  const { results } = await source
    .prepare(`SELECT * FROM ${table.name} WHERE ${table.rows} ORDER BY ${table.order}`)
    .bind(organisationId)
    .all<Record<string, unknown>>();
  for (let i = 0; i < results.length; i += ROWS_PER_BATCH) {
    const statements = results.slice(i, i + ROWS_PER_BATCH).map((row) => {
      const columns = Object.keys(row).filter((column) => !(table.renumbered && column === "seq"));
      const placeholders = columns.map((_, n) => `?${n + 1}`).join(", ");
      return target
        .prepare(`INSERT INTO ${table.name} (${columns.join(", ")}) VALUES (${placeholders})`)
        .bind(...columns.map((column) => row[column]));
    });
    await target.batch(statements);
  }
  const copied = await target
    .prepare(`SELECT count(*) AS n FROM ${table.name} WHERE ${table.rows}`)
    .bind(organisationId)
    .first<{ n: number }>();
  if (copied?.n !== results.length) {
    throw new Error(`${table.name}: copied ${copied?.n ?? 0} of ${results.length} rows`);
  }
  return results.length;
}

/** Deletes every row of the organisation in one shard, in the reverse of the copy's order. */
async function deleteOrganisation(d1: D1Database, organisationId: string): Promise<void> {
  const statements = [...TABLES].reverse().flatMap((table) => {
    const deletion = d1.prepare(`DELETE FROM ${table.name} WHERE ${table.rows}`).bind(organisationId);
    if (table.name !== "passports") return [deletion];
    // Passports are never deleted otherwise, so their search rows have no trigger to follow them.
    const keys =
      "SELECT seq FROM passport_search_keys WHERE passport_id IN (SELECT id FROM passports WHERE organisation_id = ?1)";
    return [
      d1.prepare(`DELETE FROM passport_search WHERE rowid IN (${keys})`).bind(organisationId),
      d1.prepare(`DELETE FROM passport_search_keys WHERE ${OF_PASSPORT("passport_id")}`).bind(organisationId),
      deletion,
    ];
  });
  await d1.batch(statements);
}
