import { and, asc, eq, isNull, lte, ne } from "drizzle-orm";
import { marketplaceAccountPassports, marketplaceCustomers } from "../db/acquisitions-schema.ts";
import { type Database, randomId } from "../db/client.ts";
import type { commitChangeStatements } from "../db/passports.ts";
import { bindings, passports } from "../db/schema.ts";

export type BindingRow = typeof bindings.$inferSelect;

/**
 * The binding's challenge for its first proof, made once by a single conditional update so two
 * concurrent first checks agree on it.
 */
export async function ensureChallenge(db: Database, bindingId: string): Promise<string | undefined> {
  await db
    .update(bindings)
    .set({ challenge: randomId("chl") })
    .where(and(eq(bindings.id, bindingId), isNull(bindings.challenge)));
  const [row] = await db.select({ challenge: bindings.challenge }).from(bindings).where(eq(bindings.id, bindingId));
  return row?.challenge ?? undefined;
}

/** The licenses and products of the active marketplace entitlements that created or adopted a passport. */
export async function activeMarketplaceLicenses(db: Database, passportId: string) {
  return db
    .select({ licenseArn: marketplaceCustomers.licenseArn, productCode: marketplaceCustomers.productCode })
    .from(marketplaceAccountPassports)
    .innerJoin(
      marketplaceCustomers,
      eq(marketplaceCustomers.marketplaceAccountId, marketplaceAccountPassports.marketplaceAccountId),
    )
    .where(and(eq(marketplaceAccountPassports.passportId, passportId), eq(marketplaceCustomers.status, "active")));
}

/** The statement that marks a binding verified by a proof that holds until `freshUntil`. */
export function verifiedStatement(
  db: Database,
  bindingId: string,
  proof: { method: NonNullable<BindingRow["verificationMethod"]>; evidenceId: string; at: string; freshUntil: string },
) {
  return db
    .update(bindings)
    .set({
      verificationState: "verified",
      verificationMethod: proof.method,
      verifiedAt: proof.at,
      verificationFreshUntil: proof.freshUntil,
      verificationEvidenceId: proof.evidenceId,
      lapsedAt: null,
      lapseReason: null,
      lastCheckedAt: proof.at,
      lastCheckResult: `verified by ${proof.method}`,
    })
    .where(eq(bindings.id, bindingId));
}

/** The statement that lapses a verified binding, keeping why. */
export function lapsedStatement(db: Database, bindingId: string, reason: string, at: string) {
  return db
    .update(bindings)
    .set({
      verificationState: "lapsed",
      lapsedAt: at,
      lapseReason: reason.slice(0, 500),
      verificationFreshUntil: null,
      verificationEvidenceId: null,
      lastCheckedAt: at,
      lastCheckResult: reason.slice(0, 500),
    })
    .where(eq(bindings.id, bindingId));
}

/** Notes a check that changed nothing published: when it ran and why it did not prove control. */
export async function noteCheck(db: Database, bindingId: string, at: string, result: string) {
  await db
    .update(bindings)
    .set({ lastCheckedAt: at, lastCheckResult: result.slice(0, 500) })
    .where(eq(bindings.id, bindingId));
}

/** Commits a check's change (its statements from `commitChangeStatements`) in one batch. */
export async function commitCheck(db: Database, statements: ReturnType<typeof commitChangeStatements>) {
  await db.batch(statements);
}

/** Passports of other organisations, not retired, that hold the same binding verified. */
export async function otherVerifiedHolders(db: Database, organisationId: string, binding: BindingRow) {
  return db
    .select({ id: passports.id, organisationId: passports.organisationId })
    .from(bindings)
    .innerJoin(passports, eq(bindings.passportId, passports.id))
    .where(
      and(
        eq(bindings.class, binding.class),
        eq(bindings.value, binding.value),
        eq(bindings.verificationState, "verified"),
        ne(passports.organisationId, organisationId),
        ne(passports.lifecycle, "retired"),
      ),
    );
}

/** Verified bindings of passports that are not retired whose proof ends before `before`, oldest first. */
export async function dueBindings(db: Database, before: string, limit: number) {
  return db
    .select({ binding: bindings, passport: passports })
    .from(bindings)
    .innerJoin(passports, eq(bindings.passportId, passports.id))
    .where(
      and(
        eq(bindings.verificationState, "verified"),
        lte(bindings.verificationFreshUntil, before),
        ne(passports.lifecycle, "retired"),
      ),
    )
    .orderBy(asc(bindings.verificationFreshUntil))
    .limit(limit);
}
