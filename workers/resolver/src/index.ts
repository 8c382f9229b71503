import { cache, WorkerEntrypoint } from "cloudflare:workers";
import { isIdentityId, type RpcOutcome, settle } from "@passport/domain";
import { app } from "./app.ts";
import { purgeIdentities } from "./edge-cache.ts";
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

  /**
   * Drops the edge-cached answers about some identities; called by {@link ResolverAdmin.purge}.
   * The runtime appends `env` to an RPC call's arguments, as it does for `fetch`. A refusal is
   * answered, not thrown (`RpcOutcome`).
   */
  purgeIdentities(identityIds: string[], env: Env): Promise<RpcOutcome<void>> {
    return settle(() => purgeIdentities(edgeCacheOf(env), identityIds));
  },
};

/**
 * Workers Caching's purge: the platform's `cache` wherever it has one. Local workerd has none, so
 * there the resolver purges the platform model's edge (docs/platform-model.md), bound as
 * `PLATFORM_EDGE_CACHE` only by the local and test configurations; production never binds it.
 */
function edgeCacheOf(env: Env): Pick<CacheContext, "purge"> | undefined {
  if (typeof cache?.purge === "function") return cache;
  return (env as Env & { PLATFORM_EDGE_CACHE?: Pick<CacheContext, "purge"> }).PLATFORM_EDGE_CACHE;
}

export default resolver satisfies ExportedHandler<Env>;

/**
 * Internal entry point for the control plane, reached only through a service binding (no route
 * leads here from the internet).
 */
export class ResolverAdmin extends WorkerEntrypoint<Env> {
  /**
   * Drops every cached answer for the given identities (at most 100, one purge call) so the next
   * request reads the new snapshot. Answers a failure when the platform refuses the purge or an id
   * is malformed.
   */
  purge(...identityIds: string[]): Promise<RpcOutcome<void>> {
    if (identityIds.length === 0 || !identityIds.every(isIdentityId)) {
      return Promise.resolve({ ok: false, error: "purge needs well-formed identity ids" });
    }
    // RPC to a plain-object default export works, but its methods are not typed on ctx.exports
    // (and the runtime supplies `env` itself).
    const publicEntryPoint = this.ctx.exports.default as unknown as {
      purgeIdentities(identityIds: string[]): Promise<RpcOutcome<void>>;
    };
    return publicEntryPoint.purgeIdentities(identityIds);
  }
}
