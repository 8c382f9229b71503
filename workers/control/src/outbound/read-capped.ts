import { readCappedBytes } from "@passport/verifier";

/**
 * Reads an answer's body, giving up as soon as it passes `maxBytes`: by the declared
 * Content-Length when there is one, otherwise while the stream is read, so a host can never make
 * the Worker hold more than `maxBytes` plus one chunk. Past the cap the rest of the stream is
 * cancelled. `signal`, when given, stops the wait for the next chunk (a slow host). The reader is
 * the verifier's, so the control plane and its consumers cap bodies the same way.
 */
export async function readCapped(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Uint8Array | "too-large"> {
  const read = await readCappedBytes(response, maxBytes, signal);
  return read.ok ? read.bytes : "too-large";
}
