import { DurableObject } from "cloudflare:workers";
import type { PassportRecord, StatusAuthorityApi, StatusResult } from "@passport/domain";
import { isKvWriteRefused, KV_KEY_WRITE_INTERVAL_MS, waitFor } from "./kv-writes.ts";
import { type PublishEnv, writePublication } from "./publish.ts";
import { requestPurges } from "./purge-budget.ts";
import { readCurrentState } from "./queries.ts";
import { type CurrentState, signStatus } from "./status.ts";

/** A state read from D1 is re-read after this long even if no publication told the object of a change. */
const STATE_REREAD_MS = 30_000;
/** A signed token is reused for this long while the state it states is unchanged (docs/freshness.md). */
const TOKEN_REUSE_MS = 5_000;
/**
 * Storage key of a second purge an earlier version of this object kept for its alarm; the purge
 * keeper (purge-budget.ts) holds second purges now.
 */
const LEGACY_SECOND_PURGE = "second-purge";
/**
 * How many times one run tries a publication whose KV write was refused (its key written less
 * than a second before, docs/platform-model.md), a key write interval apart; after that the
 * outbox row stays for the drain.
 */
const KV_REFUSED_ATTEMPTS = 3;

/**
 * The publication sequencer of one passport (addressed by its identity id; docs/publication.md).
 * It is the only writer of that passport's snapshot, history, feed and manifest-index entries, and
 * runs one publication at a time. A Durable Object interleaves its requests whenever one awaits
 * I/O (D1, KV, the resolver), so the order is kept by an explicit queue here, not by the object.
 *
 * Each publication reads the newest version from D1 when it starts, so calls that arrive while
 * one runs share the single next run: it publishes everything they committed before calling.
 * A run starts at least a second after the previous one ended, because each run writes the
 * passport's snapshot key again and KV takes one write a second to a key: calls within that
 * second share the run too, so a burst of changes to one passport publishes its newest version
 * once a second instead of being refused.
 */
export class PublicationSequencer extends DurableObject<PublishEnv> implements StatusAuthorityApi {
  #running: Promise<unknown> = Promise.resolve();
  #waiting: Promise<PassportRecord> | undefined;
  /** When the last run's KV writes ended (the next run's writes come at least a second later). */
  #lastRunEndedAt = 0;
  /** Publications called and not yet settled; while any runs, status is read from D1 every time. */
  #publishing = 0;
  #state: { value: CurrentState; readAt: number } | undefined;
  #token: { text: string; issuedAt: number; state: CurrentState } | undefined;
  /**
   * The object's name (its identity id), read once: `ctx.id.name` is a native getter that cost
   * about 4% of the object's CPU on the status route (scripts/bench/README.md, Status route).
   */
  #name: string | undefined | null = null;

  #ownName(): string | undefined {
    if (this.#name === null) this.#name = this.ctx.id.name;
    return this.#name;
  }

  /**
   * The passport's current status token (docs/freshness.md, Status token), signed with the record
   * key, or `found: false` when no passport has this id. The state comes from D1, the source of
   * truth, and is kept in memory only while nothing may have changed it: every publication call
   * drops it, and it is re-read at least every STATE_REREAD_MS in case a change's call never
   * arrived. Never read from KV.
   */
  async status(identityId: string): Promise<StatusResult> {
    const name = this.#ownName();
    if (name !== undefined && name !== identityId) {
      throw new Error(`the sequencer of ${name} cannot state the status of ${identityId}`);
    }
    const now = Date.now();
    let state = this.#state && now - this.#state.readAt < STATE_REREAD_MS ? this.#state.value : undefined;
    if (!state) {
      const publishing = this.#publishing;
      state = await readCurrentState(this.env.DB, identityId);
      // A publication that started meanwhile may have changed what was read: keep it for this answer only.
      if (this.#publishing === 0 && publishing === 0) this.#state = { value: state, readAt: now };
    }
    if (!state.found) return { found: false };
    let token = this.#token;
    if (!token || token.state !== state || now - token.issuedAt >= TOKEN_REUSE_MS) {
      token = { text: await signStatus(this.env.SIGNING_KEY, state, now), issuedAt: now, state };
      this.#token = token;
    }
    return { found: true, pending: state.publication === "pending", identity_id: identityId, token: token.text };
  }

  publish(identityId: string): Promise<PassportRecord> {
    // Another passport's sequencer would be a second, unordered writer of this passport.
    const name = this.#ownName();
    if (name !== undefined && name !== identityId) {
      return Promise.reject(new Error(`the sequencer of ${name} cannot publish ${identityId}`));
    }
    // Whatever this call publishes, the state known so far may be out of date from now on.
    this.#forgetState();
    this.#publishing++;
    const settled = () => {
      this.#publishing--;
      this.#forgetState();
    };
    if (this.#waiting) return this.#waiting.finally(settled);
    const run = this.#running.then(async () => {
      // Calls made while this run waits out the key write interval still share it.
      await waitFor(this.#lastRunEndedAt + KV_KEY_WRITE_INTERVAL_MS - Date.now());
      this.#waiting = undefined;
      return this.#write(identityId);
    });
    this.#waiting = run;
    this.#running = run.catch(() => undefined);
    return run.finally(settled);
  }

  /**
   * Publishes, and tries again a key write interval later when KV refused a write for coming too
   * soon after the previous one to its key (another writer, or a retry of a failed run). Nothing
   * is lost or reordered: the next attempt reads D1 again and publishes the same version (its
   * publication row is already recorded) or a newer one.
   */
  async #write(identityId: string): Promise<PassportRecord> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await writePublication(this.env, identityId);
      } catch (error) {
        if (attempt >= KV_REFUSED_ATTEMPTS || !isKvWriteRefused(error)) throw error;
        await waitFor(KV_KEY_WRITE_INTERVAL_MS);
      } finally {
        this.#lastRunEndedAt = Date.now();
      }
    }
  }

  /**
   * An alarm an earlier version set for its second purge: the purge goes to the purge keeper, which
   * owns the budget, and the object keeps nothing more.
   */
  override async alarm(): Promise<void> {
    const pending = await this.ctx.storage.get<{ identityId: string }>(LEGACY_SECOND_PURGE);
    if (pending) await requestPurges(this.env, pending.identityId, []);
    await this.ctx.storage.delete(LEGACY_SECOND_PURGE);
  }

  #forgetState(): void {
    this.#state = undefined;
    this.#token = undefined;
  }
}
