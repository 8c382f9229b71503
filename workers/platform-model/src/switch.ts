/**
 * The one switch of the platform model (docs/platform-model.md, Turning the model off):
 * `PLATFORM_MODEL=off` runs the bare local runtime, as before the model existed (the benchmarks
 * measure the Workers themselves that way). Any other value, or none, runs the model.
 */
const PLATFORM_MODEL_SWITCH = "PLATFORM_MODEL";

/** Whether the model runs, given the environment's variables (process.env, or a Worker's env). */
export function platformModelOn(variables: Record<string, unknown>): boolean {
  return String(variables[PLATFORM_MODEL_SWITCH] ?? "").toLowerCase() !== "off";
}
