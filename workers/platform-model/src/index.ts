import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";
import { EdgeCacheModel } from "./edge-cache.ts";

/**
 * The platform model's edge (docs/platform-model.md, "Workers Caching"): a Worker that stands in
 * for Workers Caching in front of the resolver. Its public fetch handler is what `npm start`
 * serves on the resolver's port; `EdgeCachePurge` is the `ctx.cache.purge` the local resolver
 * calls through a binding only local and test configurations give it. The cache and the purge
 * budget live in one Durable Object, so every caller meets one consistent edge.
 */
/** The one edge every caller shares. */
const EDGE = "edge";

export class EdgeCache extends DurableObject<Env> {
  readonly #model = new EdgeCacheModel({ origin: (request) => this.env.ORIGIN.fetch(request) });

  override fetch(request: Request): Promise<Response> {
    return this.#model.fetch(request);
  }

  purge(options: CachePurgeOptions): CachePurgeResult {
    return this.#model.purge(options);
  }

  counters() {
    return { ...this.#model.counters, purgeTokens: this.#model.purgeTokens() };
  }
}

/** `ctx.cache` for a runtime without Workers Caching: purges the modelled edge, within its budget. */
export class EdgeCachePurge extends WorkerEntrypoint<Env> {
  purge(options: CachePurgeOptions): Promise<CachePurgeResult> {
    return this.env.EDGE_CACHE.getByName(EDGE).purge(options);
  }

  /** What the edge has counted so far (tests and the local service report it). */
  counters() {
    return this.env.EDGE_CACHE.getByName(EDGE).counters();
  }
}

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    return env.EDGE_CACHE.getByName(EDGE).fetch(request);
  },
} satisfies ExportedHandler<Env>;
