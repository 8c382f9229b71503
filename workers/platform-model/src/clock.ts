/**
 * The time the models go by, in milliseconds since the epoch: the real clock by default; a
 * simulation in simulated time gives its own (`platformModel.setClock`).
 */
export type Clock = () => number;

/** Waits `ms` milliseconds of real time (nothing when 0, so a latency of 0 costs no timer). */
export const pause = (ms: number) =>
  ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
