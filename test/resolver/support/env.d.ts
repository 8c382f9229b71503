declare namespace Cloudflare {
  interface Env {
    /** The bundled resolver's admin entry point, bound as the control plane binds it. */
    TEST_RESOLVER_ADMIN: Fetcher & import("@passport/domain").ResolverAdminApi;
  }
}
