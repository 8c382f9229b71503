import { cache, WorkerEntrypoint } from "cloudflare:workers";
import { isIdentityId } from "@passport/domain";
import { app } from "./app.ts";
import { purgeIdentity } from "./edge-cache.ts";
import { fastResolve } from "./routes/passports.ts";

/**
 * The public entry point. Workers Caching stores its answers and scopes purges to the entry point
 * that calls them, so the purge RPC lives here too; RPC methods are reachable only through a
 * service binding, never from the internet. It is a plain object rather than a WorkerEntrypoint
 * class: a class costs every request an instance, measurably on the cheapest answers
 * (docs/resolver.md).
 */
const resolver = {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
    return fastResolve(request, env) ?? app.fetch(request, env, ctx);
  },

  /** Drops the edge-cached answers about one identity; called by {@link ResolverAdmin.purge}. */
  async purgeIdentity(identityId: string): Promise<void> {
    await purgeIdentity(cache, identityId);
  },
};

export default resolver satisfies ExportedHandler<Env>;

/**
 * Internal entry point for the control plane, reached only through a service binding (no route
 * leads here from the internet).
 */
export class ResolverAdmin extends WorkerEntrypoint<Env> {
  /** Drops every cached answer for one identity so the next request reads the new snapshot. */
  async purge(identityId: string): Promise<void> {
    if (!isIdentityId(identityId)) throw new TypeError("purge needs a well-formed identity id");
    // RPC to a plain-object default export works, but its methods are not typed on ctx.exports.
    const publicEntryPoint = this.ctx.exports.default as unknown as Pick<typeof resolver, "purgeIdentity">;
    await publicEntryPoint.purgeIdentity(identityId);
  }
}
