// Benchmark baseline for the transparency log's cost per publication: a stand-in for the control
// plane's TransparencyLog object that answers each append with the next index and does nothing
// else (no storage, no tiles, no checkpoint), so the pair measures what the real log adds. Also a
// rate limiter that never refuses, for the control plane's limits in the benchmark.
import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";

export default {
  fetch: () => new Response("no-log stand-in"),
};

export class NoLog extends DurableObject {
  next = 0;

  append() {
    return { index: this.next++ };
  }

  appendMany(entries) {
    return { indexes: entries.map(() => this.next++) };
  }

  publish() {}
}

/** Every rate limit of the control plane, bound to this in both instances: never refuses. */
export class Unlimited extends WorkerEntrypoint {
  limit() {
    return { success: true };
  }
}
