import { type SnapshotMetadata, snapshotKey } from "@passport/domain";

export interface Snapshot {
  /** The record's JSON text exactly as published; validated by the publisher, served as is. */
  body: string;
  metadata: SnapshotMetadata | null;
}

/**
 * The resolver's only storage access: one KV read of a published snapshot. KV's default
 * `cacheTtl` (60 s) applies; docs/freshness.md counts it in the staleness bound.
 */
export async function readSnapshot(kv: KVNamespace, identityId: string): Promise<Snapshot | null> {
  const { value, metadata } = await kv.getWithMetadata<SnapshotMetadata>(snapshotKey(identityId), "text");
  return value === null ? null : { body: value, metadata };
}
