import { pause } from "./clock.ts";
import { PLATFORM_LIMITS } from "./limits.ts";
import type { ModelClient } from "./model-time.ts";

/** What the D1 model has seen of one database since it was made or last reset. */
export interface D1Counters {
  /** Round trips: queries, batches and execs, each once. */
  roundTrips: number;
  /** Writes refused because the database was at its size limit. */
  refusals: number;
  /** The database's size as D1 last reported it (`meta.size_after`), or null before any report. */
  bytes: number | null;
  /** The most round trips in flight at one time: the database ran them one after another. */
  maxConcurrent: number;
  /** With a service time: the longest a round trip waited for the database's one writer, in ms
   * (model ms for a round trip made in model time). */
  maxWaitMs: number;
}

/** The message D1 answers a write with once a database is at its size limit (docs/platform-model.md, D1). */
export const D1_FULL_MESSAGE = "D1_ERROR: Exceeded maximum DB size";

export interface D1ModelOptions {
  /** The size past which writes are refused, in bytes (default: D1's 10 GB). */
  maxBytes?: number;
  /** Real time each round trip waits before it reaches the database, in ms (default 0). */
  latencyMs?: number;
  /**
   * Real time each round trip holds the database, one after another, in ms (default 0: local D1's
   * own speed). D1's planning figure is 1 ms a query. A round trip made by a model-time client
   * (`modelledD1`'s `client`) holds the database in that client's model time instead.
   */
  serviceMs?: number;
}

/**
 * One D1 database as the platform runs it: the bytes it stores as D1 reports them after each
 * statement, and writes that could grow it refused once it is at its size limit, as D1 refuses
 * them. Reads, deletes and drops still run at the limit: they do not grow a database, and
 * deleting is how an operator makes room.
 *
 * One round trip at a time (a batch is one) is local D1's own behaviour: Miniflare runs each
 * database in one Durable Object that executes one statement or batch at a time, as D1 does. The
 * model counts how many were in flight at once rather than queueing them itself: a queue shared
 * by the isolate would resume one request's code from another request's promise, and workerd
 * refuses a Durable Object's I/O made from another object's context.
 */
export class D1Model {
  maxBytes: number;
  latencyMs: number;
  serviceMs: number;
  #inFlight = 0;
  /** When the database's one writer is free again, on the real clock (with a service time). */
  #busyUntil = 0;
  /** The same in model time, for round trips made by model-time clients. */
  #busyUntilModel = 0;
  /** A write ran through a call that reports no size (`first`, `raw`): measure before the next write. */
  #sizeUnknown = true;
  #counters: D1Counters = { roundTrips: 0, refusals: 0, bytes: null, maxConcurrent: 0, maxWaitMs: 0 };

  constructor(options: D1ModelOptions = {}) {
    this.maxBytes = options.maxBytes ?? PLATFORM_LIMITS.d1.maxDatabaseBytes;
    this.latencyMs = options.latencyMs ?? 0;
    this.serviceMs = options.serviceMs ?? 0;
  }

  counters(): D1Counters {
    return { ...this.#counters };
  }

  reset(): void {
    this.#busyUntilModel = 0;
    this.#counters = { roundTrips: 0, refusals: 0, bytes: null, maxConcurrent: 0, maxWaitMs: 0 };
    this.#sizeUnknown = true;
  }

  /**
   * Runs one round trip. `grows` says whether it may add to the database (checked against the
   * size limit first); `measure` reads the size when no report came. A round trip of a model-time
   * `client` waits for its turn in model time and moves that client's clock instead of waiting.
   */
  async roundTrip<T>(
    grows: boolean,
    run: () => Promise<T>,
    measure: () => Promise<unknown>,
    client?: ModelClient,
  ): Promise<T> {
    if (client) await this.#takeWriterInModelTime(client);
    else {
      await pause(this.latencyMs);
      await this.#takeWriter();
    }
    this.#counters.roundTrips++;
    this.#inFlight++;
    this.#counters.maxConcurrent = Math.max(this.#counters.maxConcurrent, this.#inFlight);
    try {
      if (grows) {
        if (this.#sizeUnknown) this.noteResult(await measure());
        if ((this.#counters.bytes ?? 0) >= this.maxBytes) {
          this.#counters.refusals++;
          throw new Error(D1_FULL_MESSAGE);
        }
      }
      const result = await run();
      if (!this.noteResult(result) && grows) this.#sizeUnknown = true;
      return result;
    } finally {
      this.#inFlight--;
    }
  }

  /**
   * With a service time, waits for this round trip's turn of the database's one writer and holds
   * it for `serviceMs`. Each round trip books its slot on the clock and waits on its own timer, so
   * no request's code is resumed from another's promise (see the class comment).
   */
  async #takeWriter(): Promise<void> {
    if (this.serviceMs <= 0) return;
    const now = Date.now();
    const start = Math.max(now, this.#busyUntil);
    this.#busyUntil = start + this.serviceMs;
    this.#counters.maxWaitMs = Math.max(this.#counters.maxWaitMs, start - now);
    await pause(this.#busyUntil - now);
  }

  /** As `#takeWriter`, in `client`'s model time: its turn comes in model-time order (ModelTime). */
  async #takeWriterInModelTime(client: ModelClient): Promise<void> {
    await client.time.turn(client);
    const arrives = client.now + this.latencyMs;
    const start = Math.max(arrives, this.#busyUntilModel);
    this.#busyUntilModel = start + this.serviceMs;
    this.#counters.maxWaitMs = Math.max(this.#counters.maxWaitMs, start - arrives);
    client.now = this.#busyUntilModel;
  }

  /** Takes the size from a D1 result (or a batch's results); returns whether it carried one. */
  noteResult(result: unknown): boolean {
    const results = Array.isArray(result) ? result : [result];
    const last = results[results.length - 1] as { meta?: { size_after?: unknown } } | undefined;
    const size = last?.meta?.size_after;
    if (typeof size !== "number") return false;
    this.#counters.bytes = size;
    this.#sizeUnknown = false;
    return true;
  }
}

/** Whether a statement may make the database bigger (anything but a read, a delete or a drop). */
export function mayGrow(sql: string): boolean {
  const text = sql.replace(/^(\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)+/, "").toLowerCase();
  if (/^(select|explain|values|pragma)\b/.test(text)) return false;
  if (/^with\b/.test(text)) return /\b(insert|update|replace)\b/.test(text);
  return !/^(delete|drop)\b/.test(text);
}

type Statement = D1PreparedStatement;

/**
 * A D1 binding whose every round trip goes through `model`: counted, sizes accounted, writes
 * refused past the size limit. Statements it prepares are its own, so a batch
 * of them is recognised and run as the inner binding's batch, in one round trip. With a `client`,
 * its round trips are that model-time client's (ModelTime): a simulation gives each of its clients
 * its own modelled bindings over the same models.
 */
export function modelledD1(inner: D1Database, model: D1Model, client?: ModelClient): D1Database {
  const innerOf = new WeakMap<object, { statement: Statement; sql: string }>();
  const measure = () => inner.prepare("SELECT 1").run();

  const wrapStatement = (statement: Statement, sql: string): Statement => {
    const wrapped: Statement = new Proxy(statement, {
      get(target, property) {
        if (property === "bind") {
          return (...values: unknown[]) => wrapStatement(target.bind(...values), sql);
        }
        if (property === "first" || property === "run" || property === "all" || property === "raw") {
          return (...args: unknown[]) =>
            model.roundTrip(
              mayGrow(sql),
              () => (target[property] as (...a: unknown[]) => Promise<unknown>).apply(target, args),
              measure,
              client,
            );
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    innerOf.set(wrapped, { statement, sql });
    return wrapped;
  };

  return new Proxy(inner, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => wrapStatement(target.prepare(sql), sql);
      if (property === "batch") {
        return (statements: Statement[]) => {
          const unwrapped = statements.map((s) => innerOf.get(s) ?? { statement: s, sql: "" });
          return model.roundTrip(
            unwrapped.some((s) => mayGrow(s.sql)),
            () => target.batch(unwrapped.map((s) => s.statement)),
            measure,
            client,
          );
        };
      }
      if (property === "exec") {
        return (sql: string) => model.roundTrip(mayGrow(sql), () => target.exec(sql), measure, client);
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
