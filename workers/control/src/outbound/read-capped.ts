/**
 * Reads an answer's body, giving up as soon as it passes `maxBytes`: by the declared
 * Content-Length when there is one, otherwise while the stream is read, so a host can never make
 * the Worker hold more than `maxBytes` plus one chunk. Past the cap the rest of the stream is
 * cancelled. `signal`, when given, stops the wait for the next chunk (a slow host).
 */
export async function readCapped(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Uint8Array | "too-large"> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    await response.body?.cancel();
    return "too-large";
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const aborted = new Promise<never>((_, reject) => {
    if (!signal) return;
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  aborted.catch(() => undefined);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await Promise.race([reader.read(), aborted]);
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return "too-large";
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
