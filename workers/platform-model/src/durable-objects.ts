import type { Clock } from "./clock.ts";
import { PLATFORM_LIMITS } from "./limits.ts";

/** What the Durable Objects model has seen since it was made or last reset. */
export interface DurableObjectCounters {
  /** Requests (fetch, RPC calls, alarms) that reached an object. */
  requests: number;
  /** The most requests one object took within any one second. */
  maxRequestsPerObjectPerSecond: number;
  /** The object that reached that figure (its name, or its id), to name in a report. */
  busiestObject: string | null;
  /** Requests that arrived while their object had already taken the soft limit within the second. */
  overSoftLimit: number;
}

/**
 * Requests per object per second, against the platform's soft limit (about 1,000 a second). A
 * request over it is counted, not refused: the platform answers "overloaded" only when an object's
 * queue keeps growing under sustained load, which depends on how long each request takes there
 * (docs/platform-model.md, Durable Objects). One request at a time per object is the runtime's
 * own behaviour locally, as on the platform, so there is nothing to add for it.
 */
export class DurableObjectRequests {
  readonly #clock: Clock;
  readonly #softLimit: number;
  readonly #recent = new Map<string, number[]>();
  #counters: DurableObjectCounters = {
    requests: 0,
    maxRequestsPerObjectPerSecond: 0,
    busiestObject: null,
    overSoftLimit: 0,
  };

  constructor(clock: Clock, softLimitPerSecond: number = PLATFORM_LIMITS.durableObjects.softLimitPerSecond) {
    this.#clock = clock;
    this.#softLimit = softLimitPerSecond;
  }

  /** Counts one request to `object`. */
  note(object: string): void {
    const now = this.#clock();
    const recent = this.#recent.get(object) ?? [];
    while (recent.length > 0 && now - (recent[0] as number) >= 1000) recent.shift();
    recent.push(now);
    this.#recent.set(object, recent);
    this.#counters.requests++;
    if (recent.length > this.#softLimit) this.#counters.overSoftLimit++;
    if (recent.length > this.#counters.maxRequestsPerObjectPerSecond) {
      this.#counters.maxRequestsPerObjectPerSecond = recent.length;
      this.#counters.busiestObject = object;
    }
  }

  counters(): DurableObjectCounters {
    return { ...this.#counters };
  }

  reset(): void {
    this.#recent.clear();
    this.#counters = { requests: 0, maxRequestsPerObjectPerSecond: 0, busiestObject: null, overSoftLimit: 0 };
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a Durable Object class of any Env (a mixin's constructor type).
type DurableObjectClass = new (...args: any[]) => object;

/**
 * A subclass of a Durable Object class that counts every request its objects take (each public
 * method is one: fetch, alarm, RPC) and gives them `wrapEnv(env)` in place of their bindings.
 * The class keeps its name, so the runtime and the bindings find it as before.
 */
export function modelledDurableObjectClass<T extends DurableObjectClass>(
  Base: T,
  requests: DurableObjectRequests,
  wrapEnv: (env: object) => object,
): T {
  const names = new WeakMap<object, string>();
  const Modelled = class extends Base {
    // biome-ignore lint/suspicious/noExplicitAny: the base class's own constructor arguments.
    constructor(...args: any[]) {
      const [ctx, env] = args as [DurableObjectState, object];
      super(ctx, wrapEnv(env));
      names.set(this, ctx.id.name ?? ctx.id.toString());
    }
  };
  for (const name of methodNames(Base.prototype)) {
    const original = (Base.prototype as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
    Object.defineProperty(Modelled.prototype, name, {
      configurable: true,
      writable: true,
      value: function (this: object, ...args: unknown[]) {
        requests.note(names.get(this) ?? "unknown");
        return original.apply(this, args);
      },
    });
  }
  Object.defineProperty(Modelled, "name", { value: Base.name });
  return Modelled;
}

/** The public methods of a prototype chain, nearest first, without the constructor. */
function methodNames(prototype: object): string[] {
  const names = new Set<string>();
  for (let proto = prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (name !== "constructor" && typeof descriptor.value === "function") names.add(name);
    }
  }
  return [...names];
}
