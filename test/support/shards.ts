import { env } from "cloudflare:workers";
import { type Database, database } from "../../workers/control/src/db/client.ts";
import { shardsOf } from "../../workers/control/src/db/shards.ts";

// The tests' side of the routing rule (docs/sharding.md): a test that reads or seeds an
// organisation's rows directly asks here for the D1 database that holds them, as the service does.
// The tests run two shards, so a query sent to the wrong one finds nothing and fails its test.

function bindingOf(index: number): D1Database {
  const binding = shardsOf(env).bindings[index];
  if (!binding) throw new Error(`no shard ${index}`);
  return binding;
}

/** The D1 database that holds an organisation's rows. */
export async function shardOfOrganisation(organisationId: string): Promise<D1Database> {
  return bindingOf((await shardsOf(env).placementOf(organisationId)).shard);
}

/** The D1 database that holds a passport's rows (its organisation's shard). */
export async function shardOfIdentity(identityId: string): Promise<D1Database> {
  const organisationId = await shardsOf(env).organisationOfIdentity(identityId);
  return organisationId === null ? bindingOf(0) : shardOfOrganisation(organisationId);
}

/** Every shard's D1 database, for a test that counts or clears rows service-wide. */
export function everyShard(): D1Database[] {
  return [...shardsOf(env).bindings];
}

/** Runs `work` on every shard in turn (as the crons do), answering each shard's result in order. */
export async function inEveryShard<T>(work: (db: Database) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (const shard of everyShard()) results.push(await work(database(shard)));
  return results;
}

/** The binding name (in D1_SHARDS) of the shard that holds an organisation's rows. */
export async function shardNameOfOrganisation(organisationId: string): Promise<string> {
  const names = JSON.parse(env.D1_SHARDS) as string[];
  return names[(await shardsOf(env).placementOf(organisationId)).shard] as string;
}

/**
 * A new organisation id the directory already places beside `organisationId`, for a test that
 * relates two organisations made by different people (a parent, an operator, a transfer): the
 * service keeps related organisations in one shard and refuses to relate two in different ones
 * with `crosses-shards` (docs/sharding.md).
 */
export async function besideOrganisation(organisationId: string): Promise<string> {
  const shards = shardsOf(env);
  const id = `org_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  await shards.placeOrganisation(id, { shard: (await shards.placementOf(organisationId)).shard });
  return id;
}
