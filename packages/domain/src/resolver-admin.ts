/**
 * The resolver's internal RPC entry point (`ResolverAdmin`), reached by the control plane through
 * the `RESOLVER` service binding. Both sides are checked against this one contract.
 */
export interface ResolverAdminApi {
  /** Drops every edge-cached answer about one identity, globally. */
  purge(identityId: string): Promise<void>;
}
