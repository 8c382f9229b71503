import { and, eq, isNull, lte, ne, type SQL, sql } from "drizzle-orm";
import { marketplaceAccountPassports, marketplaceCustomers } from "../db/acquisitions-schema.ts";
import { type Database, randomId } from "../db/client.ts";
import type { commitChangeStatements } from "../db/passports.ts";
import { bindings, type CHECK_OUTCOMES, passports } from "../db/schema.ts";

export type BindingRow = typeof bindings.$inferSelect;

/** One check as the binding's log keeps it (`check_log`, the last LOG_SIZE, oldest first). */
export interface LoggedCheck {
  at: string;
  outcome: (typeof CHECK_OUTCOMES)[number];
  reason: string | null;
}

const LOG_SIZE = 5;
/** A logged reason is cut here: the log is per binding, so its size bounds the table's growth. */
const LOG_REASON_CHARS = 240;

/** The binding's check log with `entry` appended and the oldest dropped beyond LOG_SIZE, in the writing statement. */
function appendedLog(entry: LoggedCheck): SQL {
  const json = JSON.stringify({ ...entry, reason: entry.reason?.slice(0, LOG_REASON_CHARS) ?? null });
  return sql`CASE WHEN json_array_length(${bindings.checkLog}) >= ${LOG_SIZE}
    THEN json_insert(json_remove(${bindings.checkLog}, '$[0]'), '$[#]', json(${json}))
    ELSE json_insert(${bindings.checkLog}, '$[#]', json(${json})) END`;
}

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

/**
 * The statement that marks a binding verified by a proof that holds until `freshUntil`, due for
 * its next check at `nextCheckAt`, and releases any scheduler's claim on it.
 */
export function verifiedStatement(
  db: Database,
  bindingId: string,
  proof: {
    method: NonNullable<BindingRow["verificationMethod"]>;
    evidenceId: string;
    at: string;
    freshUntil: string;
    nextCheckAt: string;
    /** signing_keys: the public keys the directory held now; they replace those of the last check. */
    keys?: BindingRow["observedKeys"];
  },
) {
  return db
    .update(bindings)
    .set({
      observedKeys: proof.keys ?? null,
      verificationState: "verified",
      verificationMethod: proof.method,
      verifiedAt: proof.at,
      verificationFreshUntil: proof.freshUntil,
      verificationEvidenceId: proof.evidenceId,
      lapsedAt: null,
      lapseReason: null,
      lastCheckedAt: proof.at,
      lastCheckResult: `verified by ${proof.method}`,
      nextCheckAt: proof.nextCheckAt,
      checkClaim: null,
      checkFailures: 0,
      checkLog: appendedLog({ at: proof.at, outcome: "verified", reason: null }),
    })
    .where(eq(bindings.id, bindingId));
}

/** The statement that lapses a verified binding, keeping why, and schedules its slower re-check. */
export function lapsedStatement(
  db: Database,
  bindingId: string,
  lapse: { reason: string; at: string; outcome: "mismatch" | "expired"; nextCheckAt: string },
) {
  return db
    .update(bindings)
    .set({
      verificationState: "lapsed",
      // A lapsed directory's keys are no longer proven for the passport.
      observedKeys: null,
      lapsedAt: lapse.at,
      lapseReason: lapse.reason.slice(0, 500),
      verificationFreshUntil: null,
      verificationEvidenceId: null,
      lastCheckedAt: lapse.at,
      lastCheckResult: lapse.reason.slice(0, 500),
      nextCheckAt: lapse.nextCheckAt,
      checkClaim: null,
      checkFailures: 1,
      checkLog: appendedLog({ at: lapse.at, outcome: lapse.outcome, reason: lapse.reason }),
    })
    .where(eq(bindings.id, bindingId));
}

/**
 * Notes a member's check that changed nothing published: when it ran, what it found and why it did
 * not prove control. The schedule is left as it is.
 */
export async function noteCheck(db: Database, bindingId: string, check: LoggedCheck) {
  await db
    .update(bindings)
    .set({
      lastCheckedAt: check.at,
      lastCheckResult: (check.reason ?? check.outcome).slice(0, 500),
      checkLog: appendedLog(check),
    })
    .where(eq(bindings.id, bindingId));
}

/**
 * Records a scheduled check that changed nothing published and when the binding is tried again,
 * only while `claim` is still the binding's claim (a later claim, or a check that already reported,
 * wins). Returns whether it was recorded.
 */
export async function retryLater(
  db: Database,
  bindingId: string,
  claim: string,
  retry: LoggedCheck & { nextCheckAt: string; failures: number },
): Promise<boolean> {
  const written = await db
    .update(bindings)
    .set({
      lastCheckedAt: retry.at,
      lastCheckResult: (retry.reason ?? retry.outcome).slice(0, 500),
      nextCheckAt: retry.nextCheckAt,
      checkClaim: null,
      checkFailures: retry.failures,
      checkLog: appendedLog(retry),
    })
    .where(and(eq(bindings.id, bindingId), eq(bindings.checkClaim, claim)))
    .returning({ id: bindings.id });
  return written.length > 0;
}

/** Takes a binding off the schedule (claimed again, or its passport retired), under `claim`. */
export async function unschedule(db: Database, bindingId: string, claim: string) {
  await db
    .update(bindings)
    .set({ nextCheckAt: null, checkClaim: null })
    .where(and(eq(bindings.id, bindingId), eq(bindings.checkClaim, claim)));
}

/** A binding the scheduler claimed, with its passport; none when either is gone. */
export async function scheduledCheckOf(db: Database, bindingId: string) {
  const [row] = await db
    .select({ binding: bindings, passport: passports })
    .from(bindings)
    .innerJoin(passports, eq(bindings.passportId, passports.id))
    .where(eq(bindings.id, bindingId));
  return row;
}

export interface ClaimedCheck {
  binding_id: string;
  passport_id: string;
}

/**
 * Claims up to `limit` bindings due by `now` for one page of scheduled checks, in one statement:
 * organisations take turns (each one's oldest due binding first, then each one's second, ...), at
 * most `perOrganisation` each, so one organisation's backlog or failing checks never stand in
 * front of another's. A claim moves the binding's next check on to `leaseUntil`, so a check that
 * is lost or interrupted is taken again then and never holds a place at the head of the queue.
 * Bindings of retired passports are skipped (and taken off the schedule by `unscheduleRetired`).
 */
export async function claimDueChecks(
  db: Database,
  page: { now: string; leaseUntil: string; claim: string; perOrganisation: number; limit: number },
): Promise<ClaimedCheck[]> {
  return db.all<ClaimedCheck>(sql`
    UPDATE bindings SET check_claim = ${page.claim}, next_check_at = ${page.leaseUntil}
    FROM (
      SELECT id AS claimed_id FROM (
        SELECT b.id, p.organisation_id, b.next_check_at AS due,
          row_number() OVER (PARTITION BY p.organisation_id ORDER BY b.next_check_at, b.id) AS turn
        FROM bindings b INDEXED BY bindings_next_check
        JOIN passports p ON p.id = b.passport_id
        WHERE b.next_check_at <= ${page.now} AND p.lifecycle != 'retired'
      )
      WHERE turn <= ${page.perOrganisation}
      ORDER BY turn, due
      LIMIT ${page.limit}
    ) AS picked
    WHERE bindings.id = picked.claimed_id
    RETURNING id AS binding_id, passport_id`);
}

/** Takes the due bindings of retired passports off the schedule: retired passports are never checked. */
export async function unscheduleRetired(db: Database, now: string) {
  await db
    .update(bindings)
    .set({ nextCheckAt: null, checkClaim: null })
    .where(
      and(
        lte(bindings.nextCheckAt, now),
        sql`${bindings.passportId} IN (SELECT ${passports.id} FROM ${passports} WHERE ${passports.lifecycle} = 'retired')`,
      ),
    );
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
