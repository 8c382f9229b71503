/** Workers KV key names shared by the publisher (control plane) and the resolver. See docs/storage.md. */
export const snapshotKey = (identityId: string): string => `passport:${identityId}`;

/** Metadata stored beside each snapshot so the resolver can answer conditionals without parsing. */
export interface SnapshotMetadata {
  digest: string;
  record_version: number;
}

/** The edge-cache tag that purges one passport everywhere it is cached. */
export const identityCacheTag = (identityId: string): string => `passport-${identityId}`;
