import type { RpcOutcome } from "./rpc-outcome.ts";

/**
 * The resolver's internal RPC entry point (`ResolverAdmin`), reached by the control plane through
 * the `RESOLVER` service binding. Both sides are checked against this one contract.
 */
export interface ResolverAdminApi {
  /**
   * Drops every edge-cached answer about the given identities (at most 100: one purge call of
   * Workers Caching's budget), globally. Answers a failure when the platform refuses the purge or
   * an id is malformed (an answer, not a rejection: see `RpcOutcome`).
   */
  purge(...identityIds: string[]): Promise<RpcOutcome<void>>;
}
