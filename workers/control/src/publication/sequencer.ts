import { DurableObject } from "cloudflare:workers";
import type { PassportRecord } from "@passport/domain";
import { type PublishEnv, writePublication } from "./publish.ts";

/**
 * The publication sequencer of one passport (addressed by its identity id; docs/publication.md).
 * It is the only writer of that passport's snapshot, history, feed and manifest-index entries, and
 * runs one publication at a time. A Durable Object interleaves its requests whenever one awaits
 * I/O (D1, KV, the resolver), so the order is kept by an explicit queue here, not by the object.
 *
 * Each publication reads the newest version from D1 when it starts, so calls that arrive while
 * one runs share the single next run: it publishes everything they committed before calling.
 */
export class PublicationSequencer extends DurableObject<PublishEnv> {
  #running: Promise<unknown> = Promise.resolve();
  #waiting: Promise<PassportRecord> | undefined;

  publish(identityId: string): Promise<PassportRecord> {
    // Another passport's sequencer would be a second, unordered writer of this passport.
    const name = this.ctx.id.name;
    if (name !== undefined && name !== identityId) {
      return Promise.reject(new Error(`the sequencer of ${name} cannot publish ${identityId}`));
    }
    if (this.#waiting) return this.#waiting;
    const run = this.#running.then(() => {
      this.#waiting = undefined;
      return writePublication(this.env, identityId);
    });
    this.#waiting = run;
    this.#running = run.catch(() => undefined);
    return run;
  }
}
