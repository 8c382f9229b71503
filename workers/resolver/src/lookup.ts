import { readSnapshot, type Snapshot } from "./snapshots.ts";

/**
 * What the resolver knows about a well-formed id. `unavailable` is kept apart from `unknown`:
 * failing to read proof is not proof that the identity does not exist (spec 7).
 */
export type Lookup = { kind: "unknown" } | { kind: "unavailable" } | { kind: "found"; snapshot: Snapshot };

/** Reads the snapshot of an id already known to be well-formed (`identityIdDefect` first). */
export async function lookUp(kv: KVNamespace, identityId: string): Promise<Lookup> {
  try {
    const snapshot = await readSnapshot(kv, identityId);
    return snapshot ? { kind: "found", snapshot } : { kind: "unknown" };
  } catch (error) {
    console.error(JSON.stringify({ level: "error", event: "snapshot_read_failed", message: String(error) }));
    return { kind: "unavailable" };
  }
}

export const NOT_FOUND_DETAIL =
  "No passport with this identity id has been published. Check the id and the resolver address; a passport published moments ago can take up to a minute to appear everywhere.";
export const UNAVAILABLE_DETAIL =
  "The resolver could not read its published records just now. This says nothing about the identity; try again shortly.";
