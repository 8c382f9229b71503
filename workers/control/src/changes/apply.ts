import { mintIdentityId } from "@passport/domain";
import { requireMembershipToWrite, requireRole } from "../access/membership.ts";
import { type Database, isConstraintError, UNIQUE_VIOLATION } from "../db/client.ts";
import type { Role } from "../db/organisations.ts";
import { isGrantNoLongerHeld } from "../db/passport-entries.ts";
import {
  commitAndLoad,
  commitChangeStatements,
  createPassportStatements,
  findPassport,
  isDuplicateIdentityViolation,
  loadAggregate,
  type PassportChange,
  type PassportRow,
  passportWithMembership,
  type StoredPassport,
} from "../db/passports.ts";
import type { Shards } from "../db/shards.ts";
import { isUsesLimitViolation } from "../db/uses.ts";
import { Refusal, StaleVersion } from "../failures.ts";
import { grantNoLongerHeld } from "./authority.ts";
import { followInDirectory } from "./directory-entries.ts";
import {
  duplicateRaceRefusal,
  refuseDirectApiPassport,
  refuseDuplicates,
  refuseRepeatedBindings,
  usesLimitRefusal,
} from "./passport-changes.ts";
import type { CreatePassportRequest } from "./requests.ts";

/** Refuses a change to a passport at another version than one the caller expects (none: any version). */
function checkExpectedVersion(expected: readonly number[] | undefined, passport: PassportRow): void {
  if (!expected || expected.includes(passport.recordVersion)) return;
  throw new StaleVersion(
    `The passport is at record version ${passport.recordVersion}; re-read it and apply your change again.`,
    passport.recordVersion,
  );
}

/**
 * Names the passport that holds the primary binding a change collided with: the binding it added,
 * or, for a transfer, the passport's own bindings in the organisation it was moving to.
 */
async function refusalOfRacingDuplicate(db: Database, passport: PassportRow, change: PassportChange) {
  const organisationId = change.set?.organisationId ?? passport.organisationId;
  const candidates =
    change.kind === "binding.added"
      ? [change.detail as { class: string; value: string }]
      : ((await loadAggregate(db, passport.id))?.bindings ?? []);
  return duplicateRaceRefusal(db, organisationId, passport.family, candidates, passport.id);
}

/**
 * Creates a passport in an organisation where the caller holds at least `minimum`, in that
 * organisation's shard: duplicate refusal (in the shard, and across organisations through the
 * directory's index), the id registered in the directory, then the passport, its bindings,
 * history event and outbox row in one batch that also reads it back. A create repeating a
 * binding, and an API passport created outside the marketplace by less than an admin
 * (docs/api-passports.md), are refused first. Publication is the caller's.
 */
export async function commitCreation(shards: Shards, subject: string, minimum: Role, body: CreatePassportRequest) {
  refuseRepeatedBindings(body.bindings);
  const { membership, db } = await requireMembershipToWrite(shards, subject, body.organisation_id, minimum);
  refuseDirectApiPassport(body.family, membership.role);
  const id = mintIdentityId();
  if (!body.distinct_object_reason) {
    await refuseDuplicates(db, membership.organisationId, body.family, body.bindings, {
      claim: { shards, identityId: id },
    });
  }
  // The directory knows the id before its rows exist, so every reader that finds the passport can
  // route to it; an id whose rows were then refused points at nothing and is never minted again.
  await shards.registerIdentity(id, membership.organisationId);
  const statements = createPassportStatements(db, {
    id,
    organisationId: membership.organisationId,
    family: body.family,
    displayName: body.display_name,
    environment: body.environment,
    version: body.version,
    bindings: body.bindings,
    distinctReason: body.distinct_object_reason,
    actor: subject,
    at: new Date().toISOString(),
  });
  try {
    return await commitAndLoad(db, id, statements);
  } catch (error) {
    if (!isDuplicateIdentityViolation(error)) throw error;
    throw await duplicateRaceRefusal(db, membership.organisationId, body.family, body.bindings);
  }
}

/**
 * Who asks for a change, the least role it needs, and the record versions they expect
 * (`If-Match`); `db` is the passport's shard, `shards` has the directory the change may update.
 */
export interface ChangeRequest {
  db: Database;
  shards: Shards;
  subject: string;
  minimum: Role;
  expectedVersions?: readonly number[];
}

/**
 * Commits one material change to a passport the caller may see: role check, expected version,
 * refusal on retired passports, the change committed as the next record version with its history
 * event and outbox row. Returns the passport as the change left it; publication is the caller's.
 */
export async function commitChange(
  { db, shards, subject, minimum, expectedVersions }: ChangeRequest,
  id: string,
  build: (passport: PassportRow) => PassportChange | Promise<PassportChange>,
): Promise<StoredPassport> {
  const found = await passportWithMembership(db, subject, id);
  if (!found) throw new Refusal("identity-not-found", { detail: "No passport with this id in your organisations." });
  const { passport, membership } = found;
  requireRole(membership, minimum);
  checkExpectedVersion(expectedVersions, passport);
  if (passport.lifecycle === "retired") {
    throw new Refusal("invalid-transition", {
      detail: "Retired passports are kept exactly as they were; they cannot be changed.",
      allowed: [],
    });
  }
  const change = await build(passport);
  let stored: StoredPassport;
  try {
    stored = await commitAndLoad(
      db,
      id,
      commitChangeStatements(db, passport, change, subject, new Date().toISOString()),
    );
  } catch (error) {
    if (isDuplicateIdentityViolation(error)) throw await refusalOfRacingDuplicate(db, passport, change);
    if (isGrantNoLongerHeld(error)) throw grantNoLongerHeld();
    if (isUsesLimitViolation(error)) throw usesLimitRefusal();
    if (!isConstraintError(error, UNIQUE_VIOLATION)) throw error;
    const current = await findPassport(db, id);
    throw new StaleVersion(
      "The passport changed while your request was being applied; re-read it and try again.",
      current?.recordVersion,
    );
  }
  await followInDirectory(shards, passport, change, stored);
  return stored;
}
