declare namespace Cloudflare {
  interface Env {
    /** The platform model's edge in front of the bundled resolver (vitest.config.ts). */
    TEST_EDGE: Fetcher;
    /** The model's `ctx.cache`, as the local resolver is given it. */
    TEST_EDGE_PURGE: Fetcher & { purge(options: CachePurgeOptions): Promise<CachePurgeResult> };
    /** The bundled resolver's admin entry point, bound as the control plane binds it. */
    TEST_RESOLVER_ADMIN: Fetcher & import("@passport/domain").ResolverAdminApi;
  }
}
