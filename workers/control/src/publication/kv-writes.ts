/**
 * Workers KV takes one write a second to one key; a put or delete sooner is refused with 429
 * (docs/platform-model.md, Workers KV). Every key the control plane writes is written by one
 * writer (a passport's sequencer, or the log), which spaces its writes by this much.
 */
export const KV_KEY_WRITE_INTERVAL_MS = 1000;

/** Whether a KV write failed because its key was written less than a second before. */
export function isKvWriteRefused(error: unknown): boolean {
  return String(error).includes("429 Too Many Requests");
}

/** Waits `ms` milliseconds (nothing when the time has already passed). */
export const waitFor = (ms: number) =>
  ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
