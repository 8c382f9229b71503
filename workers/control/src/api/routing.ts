import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.ts";

// The API's half of the routing rule (docs/sharding.md): a route that names a passport or an
// organisation in its path gets, as `db`, the shard that holds it, before its handler runs. Reads
// (GET, HEAD) go on during a move, from the old copy; a write to an organisation being moved is
// refused with `organisation-moving` here, and by its shard's fence if the move began since.

function reads(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/** Path segments under /v1/passports that are routes of their own, not identity ids. */
const PASSPORT_COLLECTION_ROUTES = new Set(["batch"]);

/** `db` is the shard of the passport `:id` names. */
export const routeByIdentity: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = c.req.param("id");
  if (id && !PASSPORT_COLLECTION_ROUTES.has(id)) {
    const shards = c.get("shards");
    c.set("db", reads(c.req.method) ? await shards.readIdentity(id) : await shards.forIdentity(id));
  }
  await next();
};

/** `db` is the shard of the organisation `:id` names. */
export const routeByOrganisation: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = c.req.param("id");
  if (id) {
    const shards = c.get("shards");
    c.set("db", reads(c.req.method) ? await shards.readOrganisation(id) : await shards.forOrganisation(id));
  }
  await next();
};
