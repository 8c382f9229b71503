// The cross-organisation index of primary binding values in the directory database
// (docs/sharding.md): proofs and claims by the SHA-256 of class and canonical value, so duplicate
// detection holds across shards with one conditional statement, never a read and then a write.

/** A primary binding value as the index keys it, and whose it is. */
export interface IndexedBinding {
  class: string;
  /** The canonical value (docs/bindings.md). */
  value: string;
  identityId: string;
  organisationId: string;
}

/** Another organisation's fresh proof that refused a claim. */
export interface ProvenHolder {
  identityId: string;
  organisationId: string;
}

/** The index key of a binding value: hex SHA-256 of class, a newline and the canonical value. */
export async function bindingValueKey(bindingClass: string, value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${bindingClass}\n${value}`));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Records a passport's proof of a value until `freshUntil`. A proof is never refused: two
 * organisations proving one value is the genuine conflict of docs/bindings.md.
 */
export async function recordProof(directory: D1Database, binding: IndexedBinding, freshUntil: string): Promise<void> {
  await directory
    .prepare(
      `INSERT INTO proven_bindings (value_key, identity_id, organisation_id, fresh_until) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (value_key, identity_id) DO UPDATE SET organisation_id = excluded.organisation_id, fresh_until = excluded.fresh_until`,
    )
    .bind(await bindingValueKey(binding.class, binding.value), binding.identityId, binding.organisationId, freshUntil)
    .run();
}

/** Removes a passport's proof of a value (it lapsed, or the binding or passport went). */
export async function withdrawProof(directory: D1Database, binding: Omit<IndexedBinding, "organisationId">) {
  await directory
    .prepare("DELETE FROM proven_bindings WHERE value_key = ?1 AND identity_id = ?2")
    .bind(await bindingValueKey(binding.class, binding.value), binding.identityId)
    .run();
}

/**
 * Claims a value for a passport unless another organisation holds a proof of it fresh at `at`:
 * one `INSERT … SELECT … WHERE NOT EXISTS`, so a claim and a proof racing from two shards are
 * ordered by the directory's one writer. Returns null when the claim is recorded (or was already),
 * else the proven holder that refuses it.
 */
export async function claimBinding(
  directory: D1Database,
  binding: IndexedBinding,
  at: Date,
): Promise<ProvenHolder | null> {
  const key = await bindingValueKey(binding.class, binding.value);
  const now = at.toISOString();
  const claimed = await directory
    .prepare(
      `INSERT INTO binding_claims (value_key, identity_id, organisation_id, claimed_at)
       SELECT ?1, ?2, ?3, ?4
       WHERE NOT EXISTS (
         SELECT 1 FROM proven_bindings WHERE value_key = ?1 AND organisation_id <> ?3 AND fresh_until > ?4
       )
       ON CONFLICT (value_key, identity_id) DO UPDATE SET claimed_at = claimed_at
       RETURNING identity_id`,
    )
    .bind(key, binding.identityId, binding.organisationId, now)
    .first();
  if (claimed) return null;
  // Refused: the holder is read only to word the refusal; the decision was the statement's.
  const holder = await directory
    .prepare(
      `SELECT identity_id AS identityId, organisation_id AS organisationId FROM proven_bindings
       WHERE value_key = ?1 AND organisation_id <> ?2 AND fresh_until > ?3 ORDER BY identity_id LIMIT 1`,
    )
    .bind(key, binding.organisationId, now)
    .first<ProvenHolder>();
  // A proof that ran out between the two statements leaves no holder to name: claim again.
  return holder ?? claimBinding(directory, binding, at);
}

/** Releases a passport's claim of a value (the binding was removed, or the passport retired). */
export async function releaseClaim(directory: D1Database, binding: Omit<IndexedBinding, "organisationId">) {
  await directory
    .prepare("DELETE FROM binding_claims WHERE value_key = ?1 AND identity_id = ?2")
    .bind(await bindingValueKey(binding.class, binding.value), binding.identityId)
    .run();
}
