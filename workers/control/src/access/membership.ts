import type { Database } from "../db/client.ts";
import { membershipsEverywhere } from "../db/fan-out.ts";
import { type Membership, membershipIn, membershipsOf, type Role } from "../db/organisations.ts";
import { type PassportRow, passportWithMembership } from "../db/passports.ts";
import type { Shards } from "../db/shards.ts";
import { Refusal } from "../failures.ts";
import { roleAtLeast } from "./roles.ts";

export function requireRole(membership: Membership, minimum: Role): void {
  if (!roleAtLeast(membership.role, minimum)) {
    throw new Refusal("forbidden", { detail: `This action needs the ${minimum} role or higher.` });
  }
}

/**
 * The caller's membership in the organisation a write targets. An organisation the caller does not
 * belong to is reported as not found, so its existence does not leak; a membership whose role is
 * too weak is 403.
 */
export async function requireMembership(
  db: Database,
  subject: string,
  organisationId: string | undefined,
  minimum: Role,
): Promise<Membership> {
  let membership: Membership | undefined;
  if (organisationId) {
    membership = await membershipIn(db, subject, organisationId);
    if (!membership) throw new Refusal("route-not-found", { detail: "No such organisation." });
  } else {
    membership = onlyMembership(await membershipsOf(db, subject));
  }
  if (!membership) throw new Refusal("forbidden", { detail: `This action needs the ${minimum} role or higher.` });
  requireRole(membership, minimum);
  return membership;
}

/** The one membership a request that names no organisation means; refused for none or several. */
function onlyMembership<M extends Membership>(all: M[]): M | undefined {
  if (all.length === 0) throw new Refusal("forbidden", { detail: "You are not a member of any organisation." });
  if (all.length > 1) {
    throw new Refusal("invalid-request", {
      detail: "You belong to several organisations: name one in organisation_id.",
    });
  }
  return all[0];
}

/**
 * `requireMembership` for a write whose body names the organisation (or names none, meaning the
 * caller's only one), with the handle of the shard that holds it: the named organisation's, or,
 * for none named, the one found by asking every shard (docs/sharding.md). Refused like
 * `requireMembership`, and with `organisation-moving` while the organisation is being moved.
 */
export async function requireMembershipToWrite(
  shards: Shards,
  subject: string,
  organisationId: string | undefined,
  minimum: Role,
): Promise<{ membership: Membership; db: Database }> {
  const named = organisationId ?? onlyMembership(await membershipsEverywhere(shards, subject))?.organisationId;
  if (!named) throw new Refusal("forbidden", { detail: `This action needs the ${minimum} role or higher.` });
  const db = await shards.forOrganisation(named);
  return { membership: await requireMembership(db, subject, named, minimum), db };
}

/**
 * The passport `id` with the caller's membership in its organisation. A passport outside the
 * caller's organisations is reported exactly like one that does not exist.
 */
export async function visiblePassport(
  db: Database,
  subject: string,
  id: string,
): Promise<{ passport: PassportRow; membership: Membership }> {
  const found = await passportWithMembership(db, subject, id);
  if (!found) throw new Refusal("identity-not-found", { detail: "No passport with this id in your organisations." });
  return found;
}
