/**
 * The platform around the REAL resolver, per location and at a virtual time: its KV is the
 * propagation model, and the edge cache model stands in front of it. A verifier's `fetch` is
 * routed to one location at the reader's current time.
 */
import { env } from "cloudflare:workers";
import { identityCacheTag } from "@passport/domain";
import type { FetchLike } from "../../../packages/verifier/src/index.ts";
import { app } from "../../../workers/resolver/src/app.ts";
import { fastResolve } from "../../../workers/resolver/src/routes/passports.ts";
import { EdgeCache } from "./edge-model.ts";
import type { MultiLocationKv } from "./kv-model.ts";
import type { Trace } from "./trace.ts";

export const RESOLVER = "https://resolver.test";

const context = {
  waitUntil() {},
  passThroughOnException() {},
  props: {},
} as unknown as ExecutionContext;

export class World {
  readonly edge = new EdgeCache();
  readonly #kv: MultiLocationKv;
  /** The virtual time, ms since the epoch. */
  now = 0;

  constructor(trace: Trace, kv: MultiLocationKv, purgeRefused: (index: number) => boolean) {
    this.#kv = kv;
    trace.purges.forEach((purge, index) => {
      if (!purgeRefused(index)) this.edge.purge(identityCacheTag(purge.identityId), purge.at);
    });
  }

  /** The resolver Worker of `location`, with that location's view of KV. */
  #resolver(location: number): (request: Request) => Promise<Response> {
    const resolverEnv = {
      SNAPSHOTS: this.#kv.at(location, () => this.now),
      PUBLIC_BASE_URL: RESOLVER,
      SIGNING_JWKS: env.TEST_SIGNING_JWKS,
      LOG_VERIFIER_KEY: env.TEST_LOG_VERIFIER_KEY,
      ENVELOPE_REQUIRED_CLAIMS: "[]",
      DASHBOARD_BASE_URL: "",
    } as unknown as Parameters<typeof fastResolve>[1];
    return async (request) => await (fastResolve(request, resolverEnv) ?? app.fetch(request, resolverEnv, context));
  }

  /** What a client routed to `location` gets: the edge cache, then the resolver. */
  fetchAt(location: number): FetchLike {
    const origin = this.#resolver(location);
    return async (input, init) => {
      const request = new Request(input, { method: init?.method ?? "GET", headers: init?.headers });
      return this.edge.fetch(location, this.now, request, origin);
    };
  }
}
