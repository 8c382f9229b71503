import type { Database } from "./db/client.ts";
import { type Membership, membershipIn, membershipsOf, type Role } from "./db/organisations.ts";
import { HttpProblem } from "./http-problem.ts";
import { roleAtLeast } from "./roles.ts";

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
    if (!membership) throw new HttpProblem("route-not-found", { detail: "No such organisation." });
  } else {
    const all = await membershipsOf(db, subject);
    if (all.length === 0) throw new HttpProblem("forbidden", { detail: "You are not a member of any organisation." });
    if (all.length > 1) {
      throw new HttpProblem("invalid-request", {
        detail: "You belong to several organisations: name one in organisation_id.",
      });
    }
    membership = all[0];
  }
  if (!membership || !roleAtLeast(membership.role, minimum)) {
    throw new HttpProblem("forbidden", { detail: `This action needs the ${minimum} role or higher.` });
  }
  return membership;
}
