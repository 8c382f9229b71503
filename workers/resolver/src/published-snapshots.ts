import { type SnapshotMetadata, snapshotKey } from "@passport/domain";

interface Snapshot {
  /** The record's JSON text exactly as published; validated by the publisher, served as is. */
  body: string;
  metadata: SnapshotMetadata | null;
}

/**
 * What the resolver knows about a well-formed id. `unavailable` is kept apart from `unknown`:
 * failing to read proof is not proof that the identity does not exist (spec 7).
 */
export type Lookup = { kind: "unknown" } | { kind: "unavailable" } | { kind: "found"; snapshot: Snapshot };

/**
 * Reads the published snapshot of an id already known to be well-formed (`identityIdDefect`
 * first). This is the resolver's only storage access: one KV read. KV's default `cacheTtl` (60 s)
 * applies; docs/freshness.md counts it in the staleness bound.
 */
export async function lookUp(kv: KVNamespace, identityId: string): Promise<Lookup> {
  try {
    const { value, metadata } = await kv.getWithMetadata<SnapshotMetadata>(snapshotKey(identityId), "text");
    return value === null ? { kind: "unknown" } : { kind: "found", snapshot: { body: value, metadata } };
  } catch (error) {
    console.error(JSON.stringify({ level: "error", event: "snapshot_read_failed", message: String(error) }));
    return { kind: "unavailable" };
  }
}

export const NOT_FOUND_DETAIL =
  "No passport with this identity id has been published. Check the id and the resolver address. Its status (/api/p/{id}/status) tells an id never issued from one whose publication is still pending; a record just published can take up to 2 minutes to appear everywhere (docs/freshness.md).";
export const UNAVAILABLE_DETAIL =
  "The resolver could not read its published records just now. This says nothing about the identity; try again shortly.";
