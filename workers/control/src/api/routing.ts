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
 * Whether a write was refused for a move: routed on a placement read just before the move fenced
 * the organisation, or during it. The placement is dropped, so the caller's retry, after the
 * `Retry-After` the refusal carries, reads the directory afresh. (A placement the isolate kept from
 * before a finished move is caught by `Shards` itself, by the old shard's fence row.)
 */
function refusedForMove(c: Context<AppEnv>): boolean {
  return c.error instanceof OrganisationMoving || isFencedWrite(c.error);
}

/** `db` is the shard of the passport `:id` names. */
export const routeByIdentity: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = c.req.param("id");
  if (!id || PASSPORT_COLLECTION_ROUTES.has(id)) return next();
  const shards = c.get("shards");
  c.set("db", reads(c.req.method) ? await shards.readIdentity(id) : await shards.forIdentity(id));
  await next();
  if (refusedForMove(c)) {
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
  if (refusedForMove(c)) shards.forget(id);
};
