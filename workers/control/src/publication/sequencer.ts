import { DurableObject } from "cloudflare:workers";
import {
  type PassportRecord,
  type RpcOutcome,
  type StatusAuthorityApi,
  type StatusResult,
  settle,
} from "@passport/domain";
import { type Shards, shardsOf } from "../db/shards.ts";
import { isKvWriteRefused, KV_KEY_WRITE_INTERVAL_MS, waitFor } from "./kv-writes.ts";
import { type PublishEnv, writePublication } from "./publish.ts";
import { requestPurges } from "./purge-budget.ts";
import { readCurrentState } from "./queries.ts";
import { type CurrentState, signStatus } from "./status.ts";

/**
 * The recovery bound, `R` of docs/freshness.md: a state recorded longer ago than this is read from
 * D1 again on the next status request. Every committed change has an outbox row and reaches this
 * object by a publish call, its own or the outbox drain's (within a minute when its own was lost),
 * so this only bounds how late the object learns of what reaches it later (an organisation
 * change's bulk rows, drained after all others) or never (a write made outside the service's
 * paths). An hour keeps the long tail's reads of the write database at one per passport per hour.
 */
export const STATE_RECOVERY_MS = 3_600_000;
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
/** Storage key of the current state as this object last knew it (docs/freshness.md, Status token). */
const CURRENT_STATE = "current-state";
/** The current state, and when it was recorded: by a publication this object ran, or read from D1. */
type RecordedState = { value: CurrentState; recordedAt: number };

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
  /** Publications called and not yet settled; while any runs, the committed state may be ahead of the published one. */
  #publishing = 0;
  /** The state published by the newest run that succeeded, for the storage once no call is left. */
  #published: CurrentState | undefined;
  /** Whether the newest run to settle failed: the state is then read from D1 (the outbox keeps it pending). */
  #lastRunFailed = false;
  /** The recorded state, as kept in storage; `null` until read from it. */
  #state: RecordedState | undefined | null = null;
  /** One D1 read shared by every status request until the next publish call or the end of the publications. */
  #read: Promise<CurrentState> | undefined;
  #token: { text: string; issuedAt: number; state: CurrentState } | undefined;
  /**
   * The object's name (its identity id), read once: `ctx.id.name` is a native getter that crosses
   * into the runtime on every call, and the status route asks for it on every request (its cost is
   * measured in scripts/bench/README.md, Status route).
   */
  #name: string | undefined | null = null;

  #ownName(): string | undefined {
    if (this.#name === null) this.#name = this.ctx.id.name;
    return this.#name;
  }

  /**
   * The passport's current status token (docs/freshness.md, Status token), signed with the record
   * key, or `found: false` when no passport has this id. The state comes from this object's own
   * storage, where each publication it runs records what it published; D1, the source of truth,
   * is read only to recover: when nothing is recorded (the first request after this object began
   * recording), when the record is older than STATE_RECOVERY_MS, after a failed publication, and
   * while a publication runs (the change that called it is committed, not yet published: one read
   * per publish call, shared by every request meanwhile). Never read from KV.
   */
  async status(identityId: string): Promise<StatusResult> {
    const name = this.#ownName();
    if (name !== undefined && name !== identityId) {
      throw new Error(`the sequencer of ${name} cannot state the status of ${identityId}`);
    }
    const now = Date.now();
    const state = await this.#currentState(identityId, now);
    if (!state.found) return { found: false };
    let token = this.#token;
    if (!token || token.state !== state || now - token.issuedAt >= TOKEN_REUSE_MS) {
      token = { text: await signStatus(this.env.SIGNING_KEY, state, now), issuedAt: now, state };
      this.#token = token;
    }
    return { found: true, pending: state.publication === "pending", identity_id: identityId, token: token.text };
  }

  async #currentState(identityId: string, now: number): Promise<CurrentState> {
    if (this.#publishing > 0) return this.#readShared(identityId);
    if (this.#state === null) this.#state = await this.ctx.storage.get<RecordedState>(CURRENT_STATE);
    const recorded = this.#state;
    if (recorded && now - recorded.recordedAt < STATE_RECOVERY_MS) return recorded.value;
    const publishing = this.#publishing;
    const value = await this.#readShared(identityId);
    // A publication that started meanwhile may have changed what was read: keep it for this answer only.
    if (this.#publishing === 0 && publishing === 0 && this.#state === recorded) this.#record(value, now);
    return value;
  }

  #readShared(identityId: string): Promise<CurrentState> {
    if (!this.#read) {
      const read = readStateRouted(shardsOf(this.env), identityId);
      this.#read = read;
      // A failed read is not shared: the next request tries again.
      read.catch(() => {
        if (this.#read === read) this.#read = undefined;
      });
    }
    return this.#read;
  }

  /** Keeps `value` as the current state, in memory and in storage, where it survives eviction and deploys. */
  #record(value: CurrentState, at: number): void {
    const recorded = { value, recordedAt: at };
    this.#state = recorded;
    this.#read = undefined;
    // An id never issued is kept in memory only: probes of random ids leave no storage behind.
    if (!value.found) return;
    // Not awaited: the object's output gate holds its answers until the write is durable.
    this.ctx.storage.put<RecordedState>(CURRENT_STATE, recorded).catch((error: unknown) => {
      console.error(JSON.stringify({ level: "error", event: "status_state_not_recorded", message: String(error) }));
    });
  }

  #forget(): void {
    this.#state = undefined;
    this.#read = undefined;
    this.#token = undefined;
    this.ctx.storage.delete(CURRENT_STATE).catch(() => undefined);
  }

  /**
   * Publishes the passport's newest committed version (docs/publication.md). A failure (KV or D1
   * unavailable, a refused write) is answered, not thrown (`RpcOutcome`); `publishPassport` throws
   * it again on the caller's side.
   */
  publish(identityId: string): Promise<RpcOutcome<PassportRecord>> {
    return settle(() => this.#publish(identityId));
  }

  #publish(identityId: string): Promise<PassportRecord> {
    // Another passport's sequencer would be a second, unordered writer of this passport.
    const name = this.#ownName();
    if (name !== undefined && name !== identityId) {
      return Promise.reject(new Error(`the sequencer of ${name} cannot publish ${identityId}`));
    }
    // The change that made this call is committed: what was read or recorded so far is out of date,
    // and is dropped from storage as well, so an object reset before this publication settles
    // recovers from D1 rather than answer with the state from before it.
    this.#forget();
    this.#publishing++;
    const settled = () => {
      this.#publishing--;
      this.#read = undefined;
      this.#token = undefined;
      if (this.#publishing > 0) return;
      // Every call has settled: the newest run says what is published now.
      if (this.#lastRunFailed || !this.#published) this.#forget();
      else this.#record(this.#published, Date.now());
    };
    if (this.#waiting) return this.#waiting.finally(settled);
    const run = this.#running.then(async () => {
      // Calls made while this run waits out the key write interval still share it.
      await waitFor(this.#lastRunEndedAt + KV_KEY_WRITE_INTERVAL_MS - Date.now());
      this.#waiting = undefined;
      try {
        const record = await this.#write(identityId);
        this.#published = publishedState(record);
        this.#lastRunFailed = false;
        return record;
      } catch (error) {
        this.#lastRunFailed = true;
        throw error;
      }
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
}

/**
 * The state a successful publication leaves: its record is the newest written, and the outbox row
 * of every version up to it is cleared (`recordWritten`), so nothing is pending unless a newer
 * change is committed, whose own publish call (or the drain's) tells the object.
 */
function publishedState(record: PassportRecord): CurrentState {
  return {
    found: true,
    identity_id: record.identity_id,
    family: record.family,
    lifecycle: record.state.lifecycle,
    ...(record.state.availability ? { availability: record.state.availability } : {}),
    publication: "published",
    record_version: record.record_version,
    digest: record.digest,
  };
}

/**
 * The passport's current state from its shard, as the isolate remembers it (one round trip); when
 * the passport is not there (a move since, or an unknown id) the directory is asked again.
 */
async function readStateRouted(shards: Shards, identityId: string): Promise<CurrentState> {
  const remembered = await shards.rememberedIdentity(identityId);
  const state = await readCurrentState(remembered.db, identityId);
  if (state.found || remembered.organisationId === null) return state;
  shards.forget(remembered.organisationId);
  return readCurrentState(await shards.readIdentity(identityId), identityId);
}
