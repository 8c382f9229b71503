import { DurableObject } from "cloudflare:workers";
import { type ResolverAdminApi, unwrap } from "@passport/domain";

/**
 * The one keeper of the edge's purge budget (docs/freshness.md, "Purges"). Workers Caching allows
 * the whole service 5 purge calls a minute, in bursts of 25, each naming at most 100 tags; every
 * publication would like two purges (at once, and again once KV has propagated). So publications
 * never purge themselves: they hand their identity to this object, which queues it, coalesces the
 * queue into calls of up to 100 identities, spends its own (conservative) token bucket, purges
 * security-relevant changes first, and retries from its alarm. A publication is complete without
 * it; a purge only shortens how long the edge serves the previous answer.
 */

/** How urgent a purge is: `security` withdraws something a consumer relies on; `routine` is everything else. */
type PurgePriority = "security" | "routine";

/** One identity to purge, now or after `afterMs`. */
export interface PurgeRequest {
  identityId: string;
  priority: PurgePriority;
  afterMs?: number;
}

/**
 * History change kinds that withdraw trust (docs/history.md): a revocation, suspension or
 * retirement, a binding or key that lapsed or was removed or is contested, evidence or authority
 * withdrawn. The edge must stop serving the previous record for these first.
 */
const SECURITY_CHANGE_KINDS = new Set([
  "state.lifecycle_changed",
  "duplicate.retired",
  "binding.removed",
  "binding.lapsed",
  "binding.conflict",
  "evidence.withdrawn",
  "evidence.trust_withdrawn",
  "authority.removed",
  "authority.expired",
]);

/** The priority of a publication's purge, from the change kinds it publishes. */
export function purgePriority(changeKinds: readonly string[]): PurgePriority {
  return changeKinds.some((kind) => SECURITY_CHANGE_KINDS.has(kind)) ? "security" : "routine";
}

/**
 * KV propagation, `K` of docs/freshness.md: a resolver elsewhere may read the previous snapshot for
 * this long after the write, and its edge cache keeps what it read. A second, routine purge this
 * long after a publication drops those answers when the budget allows.
 */
export const SECOND_PURGE_DELAY_MS = 60_000;

/**
 * The keeper's own budget, below the platform's so that it never meets a refusal in normal
 * running: a bucket of 20 (the platform's is 25) refilled at 4 a minute (the platform's 5), which
 * leaves a purge a minute and a burst of 5 for anything else on the account (an operator's purge).
 */
export const KEEPER_BUDGET = { bucket: 20, refillEveryMs: 15_000, tagsPerCall: 100 } as const;
/** Routine purges leave this many tokens for security-relevant ones. */
export const SECURITY_RESERVE = 5;
/** Routine purges due now wait this long for others to join their call. */
const COALESCE_MS = 1_000;

/** The single instance's name. */
const KEEPER = "purges";

const PRIORITY: Record<PurgePriority, number> = { security: 1, routine: 0 };

/**
 * Hands a publication's purges to the keeper: one now (security first when its change kinds say
 * so) and a routine one once `K` has passed. Never throws: the publication is complete whatever
 * happens here, and the edge lifetime bounds what a missing purge costs.
 */
export async function requestPurges(
  env: { PURGE_BUDGET: DurableObjectNamespace<PurgeBudget> },
  identityId: string,
  changeKinds: readonly string[],
): Promise<void> {
  try {
    await env.PURGE_BUDGET.getByName(KEEPER).enqueue([
      { identityId, priority: purgePriority(changeKinds) },
      { identityId, priority: "routine", afterMs: SECOND_PURGE_DELAY_MS },
    ]);
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", event: "purge_not_queued", identity_id: identityId, message: String(error) }),
    );
  }
}

/** What the keeper holds and has done; tests and the simulation read it. */
export interface PurgeBudgetState {
  queued: { security: number; routine: number; later: number };
  tokens: number;
  calls: { at: number; identityIds: string[] }[];
  refusals: number;
}

type QueueRow = { identity_id: string; priority: number; due_at: number };

export class PurgeBudget extends DurableObject<Env> {
  /** Milliseconds since the epoch. Tests and a simulation replace it to run in simulated time. */
  clock: () => number = () => Date.now();
  readonly #sql: SqlStorage;
  #flushing: Promise<void> | undefined;
  /** Calls made since the object started, newest last (kept short; for tests and figures). */
  readonly #calls: { at: number; identityIds: string[] }[] = [];
  #refusals = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    // One row per identity and phase ("now" or "later"): a second request coalesces into it.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS purge_queue (
      identity_id TEXT NOT NULL,
      phase TEXT NOT NULL,
      priority INTEGER NOT NULL,
      due_at INTEGER NOT NULL,
      seq INTEGER NOT NULL,
      PRIMARY KEY (identity_id, phase)
    )`);
    this.#sql.exec("CREATE TABLE IF NOT EXISTS purge_bucket (id INTEGER PRIMARY KEY, tokens REAL, updated_at INTEGER)");
  }

  /**
   * Queues purges. A purge due now coalesces with one already queued for the identity (the higher
   * priority and the earlier time win); a later one moves to the latest due time asked for.
   */
  async enqueue(requests: PurgeRequest[]): Promise<void> {
    if (requests.length === 0) return;
    const now = this.clock();
    for (const { identityId, priority, afterMs = 0 } of requests) {
      const later = afterMs > 0;
      this.#sql.exec(
        `INSERT INTO purge_queue (identity_id, phase, priority, due_at, seq) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (identity_id, phase) DO UPDATE SET
           priority = max(priority, excluded.priority),
           due_at = CASE WHEN phase = 'later' THEN max(due_at, excluded.due_at) ELSE min(due_at, excluded.due_at) END,
           seq = excluded.seq`,
        identityId,
        later ? "later" : "now",
        PRIORITY[priority],
        now + afterMs,
        this.#nextSeq(),
      );
    }
    const urgent = requests.some((r) => !r.afterMs && r.priority === "security");
    const soonest = Math.min(...requests.map((r) => (r.afterMs ? now + r.afterMs : now + (urgent ? 0 : COALESCE_MS))));
    await this.#wakeAt(soonest);
  }

  override async alarm(): Promise<void> {
    await this.flush();
  }

  /**
   * Purges what is due, highest priority and oldest first, in calls of up to 100 identities, while
   * the budget allows (routine purges only above the security reserve). A refused or failed call
   * keeps every identity it named and empties the keeper's bucket, so the next try waits for a
   * refill. Then sets the alarm for the next thing to do.
   */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /** The queue, the budget and the calls made, for tests and the simulation. */
  state(): PurgeBudgetState {
    const now = this.clock();
    const count = (where: string) =>
      (this.#sql.exec(`SELECT count(DISTINCT identity_id) AS n FROM purge_queue WHERE ${where}`, now).one()
        .n as number) ?? 0;
    return {
      queued: {
        security: count("due_at <= ? AND priority = 1"),
        routine: count("due_at <= ? AND priority = 0"),
        later: count("due_at > ?"),
      },
      tokens: Math.floor(this.#tokens(now)),
      calls: this.#calls.map((call) => ({ ...call, identityIds: [...call.identityIds] })),
      refusals: this.#refusals,
    };
  }

  async #flush(): Promise<void> {
    for (;;) {
      const now = this.clock();
      const tokens = this.#tokens(now);
      const due = this.#sql
        .exec<QueueRow>(
          `SELECT identity_id, max(priority) AS priority, min(due_at) AS due_at FROM purge_queue
           WHERE due_at <= ? GROUP BY identity_id ORDER BY priority DESC, due_at ASC LIMIT ?`,
          now,
          KEEPER_BUDGET.tagsPerCall,
        )
        .toArray();
      const first = due[0];
      if (!first || tokens < this.#tokensNeeded(first.priority)) break;
      // Everything queued up to here is covered by this call; anything queued while it runs is not.
      const coveredSeq = this.#currentSeq();
      const identityIds = due.map((row) => row.identity_id);
      this.#saveTokens(tokens - 1, now);
      try {
        unwrap(await (this.env.RESOLVER as unknown as ResolverAdminApi).purge(...identityIds));
      } catch (error) {
        // Refused (the platform's bucket is emptier than ours) or failed: keep every identity and
        // treat the bucket as empty, so the next try waits for a refill.
        this.#refusals++;
        this.#saveTokens(0, this.clock());
        console.error(
          JSON.stringify({
            level: "warn",
            event: "purge_refused",
            identities: identityIds.length,
            message: String(error),
          }),
        );
        break;
      }
      this.#calls.push({ at: now, identityIds });
      if (this.#calls.length > 1000) this.#calls.shift();
      for (const id of identityIds) {
        this.#sql.exec(
          "DELETE FROM purge_queue WHERE identity_id = ? AND due_at <= ? AND seq <= ?",
          id,
          now,
          coveredSeq,
        );
      }
    }
    await this.#scheduleNext();
  }

  /** Sets the alarm for the next purge the queue and the budget allow, or clears it when nothing waits. */
  async #scheduleNext(): Promise<void> {
    const now = this.clock();
    const top = this.#sql
      .exec<{ priority: number; due_at: number }>(
        "SELECT priority, due_at FROM purge_queue ORDER BY (due_at <= ?) DESC, priority DESC, due_at ASC LIMIT 1",
        now,
      )
      .toArray()[0];
    if (!top) {
      await this.ctx.storage.deleteAlarm();
      return;
    }
    const missing = Math.max(0, this.#tokensNeeded(top.priority) - this.#tokens(now));
    const wake = Math.max(top.due_at, now + Math.ceil(missing * KEEPER_BUDGET.refillEveryMs));
    await this.ctx.storage.setAlarm(Date.now() + Math.max(0, wake - now));
  }

  /** Moves the alarm earlier when `at` (on the keeper's clock) comes before it. */
  async #wakeAt(at: number): Promise<void> {
    const when = Date.now() + Math.max(0, at - this.clock());
    const current = await this.ctx.storage.getAlarm();
    if (current === null || when < current) await this.ctx.storage.setAlarm(when);
  }

  #tokensNeeded(priority: number): number {
    return priority === PRIORITY.security ? 1 : SECURITY_RESERVE + 1;
  }

  #tokens(now: number): number {
    const row = this.#sql
      .exec<{ tokens: number; updated_at: number }>("SELECT tokens, updated_at FROM purge_bucket WHERE id = 1")
      .toArray()[0];
    if (!row) return KEEPER_BUDGET.bucket;
    const refilled = row.tokens + Math.max(0, now - row.updated_at) / KEEPER_BUDGET.refillEveryMs;
    return Math.min(KEEPER_BUDGET.bucket, refilled);
  }

  #saveTokens(tokens: number, now: number): void {
    this.#sql.exec(
      "INSERT INTO purge_bucket (id, tokens, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at",
      tokens,
      now,
    );
  }

  #currentSeq(): number {
    return (this.#sql.exec("SELECT coalesce(max(seq), 0) AS seq FROM purge_queue").one().seq as number) ?? 0;
  }

  #nextSeq(): number {
    return this.#currentSeq() + 1;
  }
}
