import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.ts";
import { isFencedWrite, OrganisationMoving } from "../db/shards.ts";

// The API's half of the routing rule (docs/sharding.md): a route that names a passport or an
// organisation in its path gets, as `db`, the shard that holds it, before its handler runs. Reads
// (GET, HEAD) go on during a move, from the old copy; a write to an organisation being moved is
// refused with `organisation-moving` here, and by its shard's fence if the move began since.

function reads(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/** Path segments under /v1/passports that are routes of their own, not identity ids. */
const PASSPORT_COLLECTION_ROUTES = new Set(["batch"]);

/**
 * Whether the isolate's cached placement of the organisation may be out of date: a write its old
 * shard's fence refused (routed on a placement from before a move; the caller's retry, after the
 * `Retry-After` the refusal carries, goes to the new shard), or nothing found where the cache
 * pointed (a move since; reads are otherwise served from the old copy during a move).
 */
function placementMayBeStale(c: Context<AppEnv>): boolean {
  const error = c.error;
  return error instanceof OrganisationMoving || isFencedWrite(error) || c.res.status === 404;
}

/** `db` is the shard of the passport `:id` names. */
export const routeByIdentity: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = c.req.param("id");
  if (!id || PASSPORT_COLLECTION_ROUTES.has(id)) return next();
  const shards = c.get("shards");
  c.set("db", reads(c.req.method) ? await shards.readIdentity(id) : await shards.forIdentity(id));
  await next();
  if (placementMayBeStale(c)) {
    const organisationId = await shards.organisationOfIdentity(id);
    if (organisationId) shards.forget(organisationId);
  }
};

/** `db` is the shard of the organisation `:id` names. */
export const routeByOrganisation: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = c.req.param("id");
  if (!id) return next();
  const shards = c.get("shards");
  c.set("db", reads(c.req.method) ? await shards.readOrganisation(id) : await shards.forOrganisation(id));
  await next();
  if (placementMayBeStale(c)) shards.forget(id);
};
