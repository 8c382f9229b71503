/**
 * What a Durable Object or an internal entry point answers over JS RPC. A method that throws makes
 * workerd log the error as uncaught in the callee (with its stack), although the caller receives
 * and handles it; an expected failure (a refused purge, a KV write that failed, a log refusing a
 * second digest for a version) is therefore answered as a value, and thrown again on the caller's
 * side by {@link unwrap}, where it is handled as before.
 */
export type RpcOutcome<T> = { ok: true; value: T } | { ok: false; error: string };

/** Runs `work` and answers its result or its failure's message, never a rejection. */
export async function settle<T>(work: () => T | Promise<T>): Promise<RpcOutcome<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The value of an outcome; its failure thrown as an `Error` with the callee's message. */
export function unwrap<T>(outcome: RpcOutcome<T>): T {
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.value;
}
