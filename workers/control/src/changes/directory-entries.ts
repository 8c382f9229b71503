import { PRIMARY_BINDING_CLASS } from "@passport/domain";
import { claimBinding, releaseClaim, withdrawProof } from "../db/binding-index.ts";
import type { PassportChange, PassportRow, StoredPassport } from "../db/passports.ts";
import type { Shards } from "../db/shards.ts";

// What a committed passport change tells the directory (docs/sharding.md): the identity's
// organisation, and the cross-organisation index of primary binding values (db/binding-index.ts).
// Written after the shard committed: the shard holds the truth, and the index follows it. A
// directory write that fails after the commit leaves the index behind until the next change of
// the binding (a claim the index should have refused is then let through: the genuine conflict of
// docs/bindings.md, found and recorded by the next proof).

/** A primary binding value of a family, as the index keys it. */
function isPrimary(family: PassportRow["family"], binding: { class: string }): boolean {
  return binding.class === PRIMARY_BINDING_CLASS[family];
}

/**
 * Claims the primary binding values a passport is about to hold, in the directory's index: refused
 * (returns the holder) when another organisation holds a fresh proof of one, in any shard.
 */
export async function claimPrimaryValues(
  shards: Shards,
  claimant: { identityId: string; organisationId: string; family: PassportRow["family"] },
  candidates: readonly { class: string; value: string }[],
  at = new Date(),
): Promise<{ identityId: string; organisationId: string; value: string } | undefined> {
  const directory = shards.directory;
  if (!directory) return undefined;
  for (const binding of candidates.filter((b) => isPrimary(claimant.family, b))) {
    const holder = await claimBinding(
      directory,
      {
        class: binding.class,
        value: binding.value,
        identityId: claimant.identityId,
        organisationId: claimant.organisationId,
      },
      at,
    );
    if (holder) return { ...holder, value: binding.value };
  }
  return undefined;
}

/** The directory's rows a committed change makes untrue, brought up to date. */
export async function followInDirectory(
  shards: Shards,
  before: PassportRow,
  change: PassportChange,
  after: StoredPassport,
): Promise<void> {
  const directory = shards.directory;
  if (!directory) return;
  const identityId = before.id;
  // A transfer (within a shard: routes/passports.ts refuses one across): the id is the new organisation's.
  if (change.set?.organisationId && change.set.organisationId !== before.organisationId) {
    await shards.transferIdentity(identityId, change.set.organisationId);
  }
  if (change.kind === "binding.removed") {
    const removed = change.detail as { class: string; value: string };
    if (isPrimary(before.family, removed)) {
      await withdrawProof(directory, { ...removed, identityId });
      await releaseClaim(directory, { ...removed, identityId });
    }
  }
  // A retired passport holds no value against anyone (verifiedHoldersElsewhere leaves it out too).
  if (change.set?.lifecycle === "retired") {
    for (const binding of after.bindings.filter((b) => isPrimary(before.family, b))) {
      await withdrawProof(directory, { class: binding.class, value: binding.value, identityId });
      await releaseClaim(directory, { class: binding.class, value: binding.value, identityId });
    }
  }
}
