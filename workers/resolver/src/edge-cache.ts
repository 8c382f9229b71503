/**
 * Drops the cached answers for one identity. The resolver does not keep an edge cache of its own
 * yet, so every answer comes straight from KV and there is nothing to drop.
 */
export async function purgeIdentity(_env: Env, _identityId: string): Promise<void> {}
