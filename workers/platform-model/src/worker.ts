import { modelledDurableObjectClass } from "./durable-objects.ts";
import { type ModelledBindings, modelEnv, platformModel } from "./model.ts";

type Handler = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: a Durable Object class of any Env (a mixin's constructor type).
type DurableObjectClass = new (...args: any[]) => object;

/**
 * A Worker's exports run against the platform model, without changing the Worker: its default
 * handler (fetch, scheduled, queue: each takes `env` second) and its Durable Object classes get
 * the modelled bindings, and each Durable Object request is counted. Used as the entry point of
 * the Worker under test and of `npm start` (workers/platform-model/src/entries/), never deployed.
 */
export function modelledWorker(bindings: ModelledBindings) {
  const wrapEnv = modelEnv(platformModel, bindings);
  return {
    handler<H extends Handler>(handler: H): H {
      const modelled: Handler = {};
      for (const [name, value] of Object.entries(handler)) {
        modelled[name] =
          typeof value === "function"
            ? (event: unknown, env: object, ...rest: unknown[]) => value.call(handler, event, wrapEnv(env), ...rest)
            : value;
      }
      return modelled as H;
    },
    durableObject<T extends DurableObjectClass>(Base: T): T {
      return modelledDurableObjectClass(Base, platformModel.durableObjects, wrapEnv);
    },
  };
}
