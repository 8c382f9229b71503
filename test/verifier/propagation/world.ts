/**
 * The platform around the REAL resolver, per location and at a virtual time: its KV is the
 * propagation model, and the edge cache model stands in front of it. A verifier's `fetch` is
 * routed to one location at the reader's current time.
 */
import { env } from "cloudflare:workers";
import { type FeedEntry, identityCacheTag, type StatusResult } from "@passport/domain";
import type { FetchLike } from "../../../packages/verifier/src/index.ts";
import { type CurrentState, signStatus } from "../../../workers/control/src/publication/status.ts";
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

/**
 * The control plane's authoritative state of one passport at `at`, as D1 holds it and the
 * publication sequencer reads it for a status token (readCurrentState): the committed version and
 * lifecycle of the last write, from when it was sent (trace.ts), the newest publication written to KV (its feed
 * write, after which the sequencer records it written), and pending while a committed version is
 * not yet written.
 */
export function authorityAt(trace: Trace, identityId: string, at: number): CurrentState {
  const answer = trace.answers.filter((a) => a.identityId === identityId && a.at <= at).at(-1);
  if (!answer) return { found: false };
  let written: FeedEntry | undefined;
  for (const write of trace.writes) {
    if (write.at > at || !write.key.startsWith("feed:")) continue;
    const entry = write.metadata as FeedEntry;
    if (entry.identity_id === identityId && entry.record_version > (written?.record_version ?? 0)) written = entry;
  }
  const pending = (written?.record_version ?? 0) < answer.version;
  return {
    found: true,
    identity_id: identityId,
    family: "api",
    lifecycle: answer.lifecycle,
    publication: pending ? "pending" : "published",
    ...(written ? { record_version: written.record_version, digest: written.digest } : {}),
    ...(pending ? { pending_version: answer.version, next_attempt_at: new Date(at).toISOString() } : {}),
  };
}

export class World {
  readonly edge = new EdgeCache();
  readonly #kv: MultiLocationKv;
  readonly #trace: Trace;
  /** The virtual time, ms since the epoch. */
  now = 0;

  constructor(trace: Trace, kv: MultiLocationKv, purgeRefused: (index: number) => boolean) {
    this.#kv = kv;
    this.#trace = trace;
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
      // The status route's authority: the real token signing over the trace's state at the virtual time.
      PUBLICATION_SEQUENCER: { getByName: () => ({ status: (id: string) => this.#status(id) }) },
    } as unknown as Parameters<typeof fastResolve>[1];
    return async (request) => await (fastResolve(request, resolverEnv) ?? app.fetch(request, resolverEnv, context));
  }

  async #status(identityId: string): Promise<StatusResult> {
    const state = authorityAt(this.#trace, identityId, this.now);
    if (!state.found) return { found: false };
    const token = await signStatus(env.SIGNING_KEY, state, this.now);
    return { found: true, pending: state.publication === "pending", identity_id: identityId, token };
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
