import { WorkerEntrypoint } from "cloudflare:workers";
import { app } from "./app.ts";
import { purgeIdentity } from "./edge-cache.ts";

/**
 * Internal entry point for the control plane, reached only through a service binding (no route
 * leads here from the internet).
 */
export class ResolverAdmin extends WorkerEntrypoint<Env> {
  /** Drops every cached answer for one identity so the next request reads the new snapshot. */
  async purge(identityId: string): Promise<void> {
    await purgeIdentity(this.env, identityId);
  }
}

export default app satisfies ExportedHandler<Env>;
