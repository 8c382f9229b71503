import type { Clock } from "./clock.ts";
import { type D1Counters, D1Model, modelledD1 } from "./d1.ts";
import { type DurableObjectCounters, DurableObjectRequests } from "./durable-objects.ts";
import { type KvCounters, KvWriteLimit, modelledKv } from "./kv.ts";

/** Everything the model has counted, by part (docs/platform-model.md). */
export interface PlatformCounters {
  kv: KvCounters;
  d1: Record<string, D1Counters>;
  durableObjects: DurableObjectCounters;
}

/**
 * The deployed platform's limits for the Workers of one isolate: what a test, `npm start` or a
 * simulation runs the real Workers against. One instance per isolate (`platformModel`), so the
 * Worker's handlers, its Durable Objects and the tests that run beside them share its counters.
 */
export class PlatformModel {
  #clock: Clock = Date.now;
  readonly kv = new KvWriteLimit(() => this.#clock());
  readonly durableObjects = new DurableObjectRequests(() => this.#clock());
  readonly #databases = new Map<string, D1Model>();

  /** Runs the models on `clock` (simulated time); without one, on the real clock. */
  setClock(clock: Clock = Date.now): void {
    this.#clock = clock;
  }

  /** The model of the database bound as `binding`. */
  d1(binding: string): D1Model {
    let model = this.#databases.get(binding);
    if (!model) {
      model = new D1Model();
      this.#databases.set(binding, model);
    }
    return model;
  }

  counters(): PlatformCounters {
    return {
      kv: this.kv.counters(),
      d1: Object.fromEntries([...this.#databases].map(([name, model]) => [name, model.counters()])),
      durableObjects: this.durableObjects.counters(),
    };
  }

  /** Forgets what was counted (each database keeps its size limit and latency). */
  reset(): void {
    this.kv.reset();
    this.durableObjects.reset();
    for (const model of this.#databases.values()) model.reset();
  }
}

/**
 * The isolate's model. Kept on the global object so that the Worker's entry and a test that
 * imports this module through another path (a test runner may load a module twice) share it.
 */
const GLOBAL_KEY = Symbol.for("passport.platform-model");
const shared = globalThis as Record<symbol, PlatformModel | undefined>;
shared[GLOBAL_KEY] ??= new PlatformModel();
export const platformModel: PlatformModel = shared[GLOBAL_KEY];

/** Which of a Worker's bindings are modelled, by kind. */
export interface ModelledBindings {
  kv?: readonly string[];
  d1?: readonly string[];
}

/**
 * `env` with the named bindings replaced by their models; everything else as it was. The same
 * env object gives the same modelled env, so bindings keep their identity across calls.
 */
export function modelEnv(model: PlatformModel, bindings: ModelledBindings): <E extends object>(env: E) => E {
  const cache = new WeakMap<object, object>();
  return <E extends object>(env: E): E => {
    const known = cache.get(env);
    if (known) return known as E;
    const replaced: Record<string, unknown> = {};
    const source = env as Record<string, unknown>;
    for (const name of bindings.kv ?? []) {
      if (source[name]) replaced[name] = modelledKv(source[name] as KVNamespace, model.kv);
    }
    for (const name of bindings.d1 ?? []) {
      if (source[name]) replaced[name] = modelledD1(source[name] as D1Database, model.d1(name));
    }
    const modelled = Object.assign(Object.create(Object.getPrototypeOf(env)), env, replaced) as E;
    cache.set(env, modelled);
    return modelled;
  };
}
