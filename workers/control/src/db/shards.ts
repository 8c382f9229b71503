import { type Database, database, isConstraintError } from "./client.ts";

// The routing rule (docs/sharding.md): the one place that turns an organisation or an identity id
// into the drizzle handle of the shard that holds it. An organisation the directory has no row for
// lives in shard 0 (`DB`, the database from before sharding), so adding shards needs no backfill.

/** The bindings that say where the control plane's data lives. */
export interface ShardEnv {
  /** The shards' D1 binding names in order, as a JSON list; a shard's number is its place. */
  D1_SHARDS: string;
  DB: D1Database;
  DIRECTORY?: D1Database;
}

/**
 * Raised for a write to an organisation fenced for a move; the move takes seconds. The API answers
 * it as `organisation-moving` (503, with `Retry-After`: api/problem.ts).
 */
export class OrganisationMoving extends Error {
  constructor(readonly organisationId?: string) {
    super(`organisation ${organisationId ?? ""} is being moved to another shard`);
    this.name = "OrganisationMoving";
  }
}

/** Whether a statement was refused by a shard's move fence (migration 0026's triggers). */
export function isFencedWrite(error: unknown): boolean {
  return isConstraintError(error, "organisation-moving");
}

/** The shards' D1 bindings, in the order D1_SHARDS names them. */
export function shardBindings(env: ShardEnv): D1Database[] {
  const names = JSON.parse(env.D1_SHARDS || '["DB"]') as unknown;
  if (!Array.isArray(names) || names.length === 0) throw new Error("D1_SHARDS must be a non-empty JSON list");
  return names.map((name) => {
    const binding = (env as unknown as Record<string, unknown>)[String(name)];
    if (!binding) throw new Error(`D1_SHARDS names ${String(name)}, which is not a D1 binding`);
    return binding as D1Database;
  });
}

/**
 * The shard a new organisation is placed in: FNV-1a of its id over the shard count. Only the
 * placement uses it; where an organisation is afterwards is the directory's row, so a move or a
 * new shard changes nothing here for organisations already placed.
 */
export function hashedShard(organisationId: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < organisationId.length; i++) {
    hash ^= organisationId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}

/** Where an organisation is, as the directory says. */
export interface Placement {
  shard: number;
  /** The shard it is being copied to while fenced for a move, else null. */
  movingTo: number | null;
  /** Whether the directory has a row for it (false: shard 0 by default). */
  known: boolean;
}

/**
 * How long an isolate keeps an answer of the directory. A move leaves its fence row in the old
 * shard for good: one passport's or organisation's reads and writes use a kept placement once that
 * shard shows no fence row for it, and a write that read the placement just before a move began is
 * refused there (`organisation-moving`) rather than written. List pages use it unchecked, and ask
 * again when a page comes back empty.
 */
const PLACEMENT_CACHE_MS = 60_000;

export class Shards {
  readonly #handles: Database[];
  readonly #placements = new Map<string, { shard: number; until: number }>();
  readonly #identities = new Map<string, { organisationId: string; until: number }>();

  constructor(
    readonly bindings: D1Database[],
    readonly directory: D1Database | undefined,
  ) {
    if (bindings.length > 1 && !directory) throw new Error("more than one shard needs the DIRECTORY binding");
    this.#handles = bindings.map((binding) => database(binding));
  }

  get count(): number {
    return this.bindings.length;
  }

  /** The handle of shard `index`. */
  shard(index: number): Database {
    const handle = this.#handles[index];
    if (!handle) throw new Error(`no shard ${index}: D1_SHARDS lists ${this.count}`);
    return handle;
  }

  /** Every shard's handle, for the work designed to cross shards (crons, fan-out reads). */
  everyShard(): Database[] {
    return [...this.#handles];
  }

  /**
   * Places a new organisation and returns its shard. A sub-organisation goes where its parent is
   * (`parentId`), so a family of organisations shares one shard and its references stay inside it;
   * `shard` pins a placement (the marketplace's organisations, docs/sharding.md); any other is
   * placed by a hash of its id. One statement: two creations racing for the same id agree on the
   * first one's row, and an organisation already placed keeps its shard.
   */
  async placeOrganisation(
    organisationId: string,
    options: { parentId?: string | null; shard?: number; at?: Date } = {},
  ): Promise<number> {
    if (!this.directory) return 0;
    const wanted =
      options.shard ??
      (options.parentId ? (await this.placementOf(options.parentId)).shard : hashedShard(organisationId, this.count));
    const row = await this.directory
      .prepare(
        `INSERT INTO organisation_shards (organisation_id, shard, placed_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (organisation_id) DO UPDATE SET shard = shard RETURNING shard`,
      )
      .bind(organisationId, wanted, (options.at ?? new Date()).toISOString())
      .first<{ shard: number }>();
    return row?.shard ?? 0;
  }

  /** Where the directory places an organisation: shard 0, unfenced, when it has no row. */
  async placementOf(organisationId: string): Promise<Placement> {
    if (!this.directory) return { shard: 0, movingTo: null, known: false };
    const row = await this.directory
      .prepare("SELECT shard, moving_to AS movingTo FROM organisation_shards WHERE organisation_id = ?1")
      .bind(organisationId)
      .first<Omit<Placement, "known">>();
    return row ? { ...row, known: true } : { shard: 0, movingTo: null, known: false };
  }

  /**
   * The shard holding an organisation as the isolate last heard it, else the directory's answer:
   * for a read that can tell a stale answer (a page that comes back empty asks again, with
   * `forget`). An answer is cached only outside a move, so the copy's flip is seen.
   */
  async shardOfOrganisation(organisationId: string): Promise<number> {
    const cached = this.#placements.get(organisationId);
    if (cached && cached.until > Date.now()) return cached.shard;
    const placement = await this.placementOf(organisationId);
    if (placement.movingTo === null) this.#rememberPlacement(organisationId, placement.shard);
    return placement.shard;
  }

  /** The handle for reading an organisation's data; reads go on during a move, from the old copy. */
  async readOrganisation(organisationId: string): Promise<Database> {
    return this.shard(await this.#checkedShard(organisationId, "read"));
  }

  /**
   * The handle for writing an organisation's data. Refused with `OrganisationMoving` while the
   * organisation is fenced; its shard's fence (migration 0026) holds the same rule for a write
   * that read the placement just before the fence was set.
   */
  async forOrganisation(organisationId: string): Promise<Database> {
    return this.shard(await this.#checkedShard(organisationId, "write"));
  }

  /**
   * The shard of one organisation's reads and writes. The isolate's remembered placement is used
   * once its shard confirms, by one look at its fence rows, that the organisation was not moved
   * away (a move leaves a fence row in the old shard for good): that look costs the shard, which
   * scales out, rather than the directory, which is one database. Otherwise the directory is asked.
   */
  async #checkedShard(organisationId: string, use: "read" | "write"): Promise<number> {
    const cached = this.#placements.get(organisationId);
    if (cached && cached.until > Date.now()) {
      const fenced = await this.bindings[cached.shard]
        ?.prepare("SELECT 1 AS fenced FROM organisation_fences WHERE organisation_id = ?1")
        .bind(organisationId)
        .first();
      if (!fenced) return cached.shard;
      this.#placements.delete(organisationId);
    }
    const placement = await this.placementOf(organisationId);
    if (placement.movingTo !== null) {
      if (use === "write") throw new OrganisationMoving(organisationId);
      return placement.shard;
    }
    this.#rememberPlacement(organisationId, placement.shard);
    return placement.shard;
  }

  /**
   * Drops an organisation's cached shard: after its old shard refused a write as moving, or a read
   * found nothing where the cache pointed (a move since), so the next request asks the directory.
   */
  forget(organisationId: string): void {
    this.#placements.delete(organisationId);
  }

  #rememberPlacement(organisationId: string, shard: number): void {
    remember(this.#placements, organisationId, { shard, until: Date.now() + PLACEMENT_CACHE_MS });
  }

  /** Records which organisation a new identity id belongs to; the id is never re-minted. */
  async registerIdentity(identityId: string, organisationId: string): Promise<void> {
    await this.directory
      ?.prepare("INSERT INTO identity_organisations (identity_id, organisation_id) VALUES (?1, ?2)")
      .bind(identityId, organisationId)
      .run();
  }

  /**
   * Records that an identity now belongs to another organisation of the same shard (a transfer):
   * its directory row, and its proofs and claims in the duplicate index (db/binding-index.ts), so
   * the organisation's own proof never refuses its own claim. One batch, one transaction.
   */
  async transferIdentity(identityId: string, organisationId: string): Promise<void> {
    const directory = this.directory;
    if (!directory) return;
    this.#identities.delete(identityId);
    await directory.batch(
      [
        `INSERT INTO identity_organisations (identity_id, organisation_id) VALUES (?1, ?2)
         ON CONFLICT (identity_id) DO UPDATE SET organisation_id = excluded.organisation_id`,
        "UPDATE proven_bindings SET organisation_id = ?2 WHERE identity_id = ?1",
        "UPDATE binding_claims SET organisation_id = ?2 WHERE identity_id = ?1",
      ].map((sql) => directory.prepare(sql).bind(identityId, organisationId)),
    );
  }

  /**
   * The organisation an identity id belongs to, or null when the directory does not know it. An
   * isolate keeps the answer a minute: it changes only by a transfer, which stays inside one shard,
   * so a stale answer still routes to the right shard.
   */
  async organisationOfIdentity(identityId: string): Promise<string | null> {
    if (!this.directory) return null;
    const cached = this.#identities.get(identityId);
    if (cached && cached.until > Date.now()) return cached.organisationId;
    const row = await this.directory
      .prepare("SELECT organisation_id AS organisationId FROM identity_organisations WHERE identity_id = ?1")
      .bind(identityId)
      .first<{ organisationId: string }>();
    if (row) remember(this.#identities, identityId, { ...row, until: Date.now() + PLACEMENT_CACHE_MS });
    return row?.organisationId ?? null;
  }

  /**
   * The handle for reading an identity's data: its organisation's shard, or shard 0 for an id the
   * directory does not know (every passport from before sharding is there).
   */
  async readIdentity(identityId: string): Promise<Database> {
    const organisationId = await this.organisationOfIdentity(identityId);
    return organisationId === null ? this.shard(0) : this.readOrganisation(organisationId);
  }

  /**
   * The handle an identity's data was in when the isolate last asked, unchecked: for a read that
   * can tell a stale answer (it finds no passport there), which then calls `forget` and
   * `readIdentity`. One round trip fewer than `readIdentity` on the common path.
   */
  async rememberedIdentity(identityId: string): Promise<{ db: Database; organisationId: string | null }> {
    const organisationId = await this.organisationOfIdentity(identityId);
    if (organisationId === null) return { db: this.shard(0), organisationId };
    return { db: this.shard(await this.shardOfOrganisation(organisationId)), organisationId };
  }

  /** The handle for writing an identity's data; refused while its organisation is moving. */
  async forIdentity(identityId: string): Promise<Database> {
    const organisationId = await this.organisationOfIdentity(identityId);
    return organisationId === null ? this.shard(0) : this.forOrganisation(organisationId);
  }
}

/** At most this many answers of each kind an isolate keeps; the oldest goes first. */
const CACHED_ANSWERS = 10_000;

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > CACHED_ANSWERS) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
}

// One instance per configuration: workerd hands every request of an isolate the same bindings.
const instances = new WeakMap<D1Database, Shards>();

/** The shards of an environment. */
export function shardsOf(env: ShardEnv): Shards {
  let shards = instances.get(env.DB);
  if (!shards) {
    shards = new Shards(shardBindings(env), env.DIRECTORY);
    instances.set(env.DB, shards);
  }
  return shards;
}
