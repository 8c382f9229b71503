import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Database } from "./client.ts";
import { authority, bindings, evidence } from "./schema.ts";

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
  return db.query.bindings.findFirst({
    where: and(
      eq(bindings.passportId, passportId),
      eq(bindings.class, binding.class),
      eq(bindings.value, binding.value),
    ),
  });
}

export async function bindingOf(db: Database, passportId: string, bindingId: string): Promise<BindingRow | undefined> {
  return db.query.bindings.findFirst({ where: and(eq(bindings.id, bindingId), eq(bindings.passportId, passportId)) });
}

export function insertBinding(db: Database, row: typeof bindings.$inferInsert) {
  return db.insert(bindings).values(row);
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

export function deleteAuthority(db: Database, authorityId: string) {
  return db.delete(authority).where(eq(authority.id, authorityId));
}

export function setAuthorityExpiry(db: Database, authorityId: string, expiresAt: string) {
  return db.update(authority).set({ expiresAt }).where(eq(authority.id, authorityId));
}
