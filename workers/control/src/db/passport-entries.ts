import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { type Database, isConstraintError } from "./client.ts";
import { authority, bindings, evidence, members, organisations, passports } from "./schema.ts";

// The entries a passport carries besides its own row: bindings, evidence and authority context.
// Reads run at once; writes are returned as statements so a change commits them in one batch.

export type BindingRow = typeof bindings.$inferSelect;
export type EvidenceRow = typeof evidence.$inferSelect;
export type AuthorityRow = typeof authority.$inferSelect;

/** The passport's binding with exactly this class and value, if it has one. */
export async function bindingWithValue(
  db: Database,
  passportId: string,
  binding: { class: string; value: string },
): Promise<BindingRow | undefined> {
  const [row] = await bindingWithValueRead(db, passportId, binding);
  return row;
}

/** `bindingWithValue` as a statement (at most one row), for a batch that carries other reads. */
export function bindingWithValueRead(db: Database, passportId: string, binding: { class: string; value: string }) {
  return db
    .select()
    .from(bindings)
    .where(
      and(eq(bindings.passportId, passportId), eq(bindings.class, binding.class), eq(bindings.value, binding.value)),
    )
    .limit(1);
}

export async function bindingOf(db: Database, passportId: string, bindingId: string): Promise<BindingRow | undefined> {
  return db.query.bindings.findFirst({ where: and(eq(bindings.id, bindingId), eq(bindings.passportId, passportId)) });
}

export function insertBinding(db: Database, row: typeof bindings.$inferInsert) {
  return db.insert(bindings).values(row);
}

/** Sets the environment and/or version of one binding (null clears one). */
export function setBindingContext(
  db: Database,
  bindingId: string,
  set: { environment?: string | null; version?: string | null },
) {
  return db.update(bindings).set(set).where(eq(bindings.id, bindingId));
}

export function deleteBinding(db: Database, bindingId: string) {
  return db.delete(bindings).where(eq(bindings.id, bindingId));
}

/**
 * Makes every binding of the passport that the service has checked before (verified or lapsed) due
 * for its scheduled check at `at`, dropping any claim in flight, so a re-evaluation re-runs them
 * through the binding-checks queue (docs/lifecycle.md#re-evaluation).
 */
export function rescheduleCheckedBindings(db: Database, passportId: string, at: string) {
  return db
    .update(bindings)
    .set({ nextCheckAt: at, checkClaim: null })
    .where(and(eq(bindings.passportId, passportId), inArray(bindings.verificationState, ["verified", "lapsed"])));
}

/**
 * Takes every binding of the passport off the scheduled re-checks, dropping any claim in flight:
 * part of a retirement's batch, as retired passports are never checked again.
 */
export function unscheduleBindings(db: Database, passportId: string) {
  return db.update(bindings).set({ nextCheckAt: null, checkClaim: null }).where(eq(bindings.passportId, passportId));
}

/** The passport's evidence item `evidenceId`, unless it was withdrawn. */
export async function currentEvidenceOf(
  db: Database,
  passportId: string,
  evidenceId: string,
): Promise<EvidenceRow | undefined> {
  return db.query.evidence.findFirst({
    where: and(eq(evidence.id, evidenceId), eq(evidence.passportId, passportId), isNull(evidence.withdrawnAt)),
  });
}

export function insertEvidence(db: Database, row: typeof evidence.$inferInsert) {
  return db.insert(evidence).values(row);
}

/** Evidence is withdrawn, never deleted: the history keeps what was claimed. */
export function withdrawEvidence(db: Database, evidenceId: string, at: string) {
  return db.update(evidence).set({ withdrawnAt: at }).where(eq(evidence.id, evidenceId));
}

export async function authorityOf(
  db: Database,
  passportId: string,
  authorityId: string,
): Promise<AuthorityRow | undefined> {
  return db.query.authority.findFirst({
    where: and(eq(authority.id, authorityId), eq(authority.passportId, passportId)),
  });
}

export function insertAuthority(db: Database, row: typeof authority.$inferInsert) {
  return db.insert(authority).values(row);
}

/** A structured grant to insert, with who wrote it and the passport's organisation. */
export interface GrantInsert {
  row: typeof authority.$inferInsert & {
    grantedByKind: "organisation" | "passport";
    grantedById: string;
    grantedByRelationship: "responsible" | "parent" | "passport";
  };
  subject: string;
  organisationId: string;
}

/**
 * Inserts a structured grant whose grantor holds in the statement itself: its kind (and the role
 * recorded) are read from the granting member's owner or admin membership, and for a parent or a
 * passport from the parent link or the granting passport being active in the organisation, as the
 * statement runs. Lost in the meantime, the kind is NULL beside the id, the `authority_grant_held`
 * constraint refuses the row and the whole change rolls back (`isGrantNoLongerHeld`).
 */
export function insertGrant(db: Database, { row, subject, organisationId }: GrantInsert) {
  const granting = row.grantedByRelationship === "parent" ? row.grantedById : organisationId;
  const held = sql`(SELECT ${members.role} FROM ${members} WHERE ${members.organisationId} = ${granting} AND ${members.subject} = ${subject} AND ${members.role} IN ('owner', 'admin'))`;
  const still =
    row.grantedByRelationship === "parent"
      ? sql`EXISTS (SELECT 1 FROM ${organisations} WHERE ${organisations.id} = ${organisationId} AND ${organisations.parentId} = ${row.grantedById})`
      : row.grantedByRelationship === "passport"
        ? sql`EXISTS (SELECT 1 FROM ${passports} WHERE ${passports.id} = ${row.grantedById} AND ${passports.organisationId} = ${organisationId} AND ${passports.lifecycle} = 'active')`
        : sql`1`;
  return db.insert(authority).values({
    ...row,
    grantedByKind: sql`(SELECT ${row.grantedByKind} WHERE ${held} IS NOT NULL AND ${still})`,
    grantedByRole: row.grantedByKind === "organisation" ? held : null,
  });
}

/** Whether a change failed because a grant's grantor no longer held when it was written (`insertGrant`). */
export function isGrantNoLongerHeld(error: unknown): boolean {
  return isConstraintError(error, "authority_grant_held");
}

export function deleteAuthority(db: Database, authorityId: string) {
  return db.delete(authority).where(eq(authority.id, authorityId));
}

export function setAuthorityExpiry(db: Database, authorityId: string, expiresAt: string) {
  return db.update(authority).set({ expiresAt }).where(eq(authority.id, authorityId));
}
