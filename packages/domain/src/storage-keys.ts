import { sha256Base64url } from "./encoding.ts";

/** Workers KV key names shared by the publisher (control plane) and the resolver. See docs/storage.md. */
export const snapshotKey = (identityId: string): string => `passport:${identityId}`;

/** Metadata stored beside each snapshot so the resolver can answer conditionals without parsing. */
export interface SnapshotMetadata {
  digest: string;
  record_version: number;
}

/** The edge-cache tag that purges one passport everywhere it is cached. */
export const identityCacheTag = (identityId: string): string => `passport-${identityId}`;

/**
 * The manifest index prefix for one agent manifest URL: `manifest:{base64url SHA-256 of the URL}:`.
 * Each agent passport bound to that manifest has the key `{prefix}{identity_id}`, so one KV list
 * by prefix finds every passport that claims the manifest.
 */
export async function manifestIndexPrefix(manifestUrl: string): Promise<string> {
  return `manifest:${await sha256Base64url(new URL(manifestUrl).href)}:`;
}
