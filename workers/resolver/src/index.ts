import { WorkerEntrypoint } from "cloudflare:workers";
import type { ResolverAdminApi } from "@passport/domain";
import { isIdentityId } from "@passport/domain";
import { app } from "./app.ts";
import { purgeIdentity } from "./edge-cache.ts";
import { fastResolve } from "./routes/passports.ts";

/**
 * The public entry point. Workers Caching stores its answers and scopes purges to the entry point
 * that calls them, so the purge RPC lives here too. RPC methods are reachable only through a
 * service binding, never from the internet.
 */
export default class Resolver extends WorkerEntrypoint<Env> {
  override fetch(request: Request): Response | Promise<Response> {
    return fastResolve(request, this.env) ?? app.fetch(request, this.env, this.ctx);
  }

  /** Drops the edge-cached answers about one identity; called by {@link ResolverAdmin.purge}. */
  async purgeIdentity(identityId: string): Promise<void> {
    await purgeIdentity(this.ctx.cache, identityId);
  }
}

/**
 * Internal entry point for the control plane, reached only through a service binding (no route
 * leads here from the internet).
 */
export class ResolverAdmin extends WorkerEntrypoint<Env> implements ResolverAdminApi {
  /** Drops every cached answer for one identity so the next request reads the new snapshot. */
  async purge(identityId: string): Promise<void> {
    if (!isIdentityId(identityId)) throw new TypeError("purge needs a well-formed identity id");
    await this.ctx.exports.default.purgeIdentity(identityId);
  }
}
