import { roleAtLeast } from "../access/roles.ts";
import { type Database, randomId } from "../db/client.ts";
import { membershipIn, organisationWithParent } from "../db/organisations.ts";
import { bindingOf, insertAuthority, insertGrant, setBindingContext } from "../db/passport-entries.ts";
import { findPassport, type PassportChange, type PassportRow } from "../db/passports.ts";
import { Refusal } from "../failures.ts";
import type { AuthorityInput, BindingContextRequest } from "./requests.ts";

// The rules of structured authority and per-binding context (docs/authority.md). Who granted an
// authority entry is never taken as typed: the service checks the named organisation or passport
// against the caller's memberships and the passport's organisation when the entry is written.

type Grantor = NonNullable<AuthorityInput["granted_by"]>;
type CheckedGrantor = Grantor & { role?: "owner" | "admin" };

const refuseId = (message: string) =>
  new Refusal("invalid-request", {
    detail: `granted_by.id ${message}.`,
    errors: [{ path: "granted_by.id", message }],
  });

/** The caller's role in `organisationId` when it is owner or admin; otherwise the 403 that refuses the grant. */
async function grantingRole(db: Database, subject: string, organisationId: string, as: string) {
  const membership = await membershipIn(db, subject, organisationId);
  if (membership && roleAtLeast(membership.role, "admin")) return membership.role as "owner" | "admin";
  throw new Refusal("forbidden", {
    detail: `Granting authority as ${as} needs the owner or admin role in organisation ${organisationId}${membership ? `; you are ${membership.role} there` : "; you are not a member of it"}.`,
  });
}

/**
 * Checks the grantor a member names, and returns it with the role the member holds:
 * - `responsible`: the passport's own organisation, where the member is owner or admin;
 * - `parent`: that organisation's parent, where the member is owner or admin;
 * - `passport`: another active passport of the passport's organisation, and the member is owner or
 *   admin of that organisation (a passport cannot grant on its own; a member answers for it).
 * A passport of another organisation is refused exactly like one that does not exist.
 */
async function checkedGrantor(
  db: Database,
  subject: string,
  passport: PassportRow,
  grantor: Grantor,
): Promise<CheckedGrantor> {
  const organisationId = passport.organisationId;
  if (grantor.relationship === "responsible") {
    if (grantor.id !== organisationId) {
      throw refuseId(`is not this passport's responsible organisation (${organisationId})`);
    }
    return { ...grantor, role: await grantingRole(db, subject, organisationId, "the responsible organisation") };
  }
  if (grantor.relationship === "parent") {
    const parentId = (await organisationWithParent(db, organisationId))?.organisation.parentId;
    if (!parentId) throw refuseId("names a parent, but this passport's organisation has no parent organisation");
    if (grantor.id !== parentId) throw refuseId(`is not the parent of this passport's organisation (${parentId})`);
    return { ...grantor, role: await grantingRole(db, subject, parentId, "the parent organisation") };
  }
  if (grantor.id === passport.id) throw refuseId("is this passport: a passport cannot grant itself authority");
  const granting = await findPassport(db, grantor.id);
  if (!granting || granting.organisationId !== organisationId || granting.lifecycle !== "active") {
    throw refuseId("names no active passport of this passport's organisation");
  }
  await grantingRole(db, subject, organisationId, "a passport of the responsible organisation");
  return grantor;
}

/** The refusal of a grant whose grantor stopped holding (role, parent link, passport) while it was written. */
export function grantNoLongerHeld(): Refusal {
  return new Refusal("forbidden", {
    detail:
      "The grantor no longer holds: the granting role, the parent organisation or the granting passport changed while the grant was being written. Nothing was changed.",
  });
}

/**
 * Adds an authority entry: free-text context as before, or a structured entry whose grantor the
 * service checked (`checkedGrantor`), recorded with the role the member held and the time.
 */
export async function authorityAddition(
  db: Database,
  subject: string,
  passport: PassportRow,
  input: AuthorityInput,
): Promise<PassportChange> {
  const id = randomId("au");
  const grantor = input.granted_by ? await checkedGrantor(db, subject, passport, input.granted_by) : undefined;
  const at = new Date().toISOString();
  const limits = input.scope?.limits;
  return {
    kind: "authority.added",
    detail: {
      authority_id: id,
      action: input.action,
      ...(grantor ? { granted_by: grantor, expires_at: new Date(input.expires_at as string).toISOString() } : {}),
    },
    statements: [
      grantor
        ? insertGrant(db, {
            row: {
              id,
              passportId: passport.id,
              action: input.action,
              context: input.context,
              expiresAt: new Date(input.expires_at as string).toISOString(),
              resource: input.scope?.resource,
              amountValue: limits?.amount?.value,
              amountCurrency: limits?.amount?.currency,
              rateCount: limits?.rate?.count,
              ratePer: limits?.rate?.per,
              grantedByKind: grantor.kind,
              grantedById: grantor.id,
              grantedByRelationship: grantor.relationship,
              grantedAt: at,
            },
            subject,
            organisationId: passport.organisationId,
          })
        : insertAuthority(db, {
            id,
            passportId: passport.id,
            action: input.action,
            context: input.context,
            expiresAt: input.expires_at ? new Date(input.expires_at).toISOString() : undefined,
          }),
    ],
  };
}

/** Sets or clears the environment and version of one binding; its proof of control is unchanged. */
export async function bindingContextChange(
  db: Database,
  passport: PassportRow,
  bindingId: string,
  input: BindingContextRequest,
): Promise<PassportChange> {
  const binding = await bindingOf(db, passport.id, bindingId);
  if (!binding) throw new Refusal("route-not-found", { detail: "This passport has no binding with that id." });
  const set = {
    ...(input.environment !== undefined ? { environment: input.environment } : {}),
    ...(input.version !== undefined ? { version: input.version } : {}),
  };
  if (Object.entries(set).every(([key, value]) => binding[key as keyof typeof set] === value)) {
    throw new Refusal("invalid-request", {
      detail: "The binding already has this environment and version; nothing was changed.",
    });
  }
  return {
    kind: "binding.context_changed",
    detail: { binding_id: binding.id, class: binding.class, value: binding.value, ...set },
    statements: [setBindingContext(db, binding.id, set)],
  };
}
