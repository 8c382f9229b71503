// The one switch of the platform model (docs/platform-model.md): the tests and `npm start` run the
// Workers under it unless PLATFORM_MODEL=off. The benchmarks never do: they measure the Workers.

/** Whether the Workers run under the platform model. */
export const platformModelOn = (env = process.env) => String(env.PLATFORM_MODEL ?? "").toLowerCase() !== "off";

/** The control plane's entry under the model, relative to the repository root. */
export const MODELLED_CONTROL_ENTRY = "workers/platform-model/src/entries/control.ts";
