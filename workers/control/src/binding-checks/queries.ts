import type { ObservedSigningKey } from "@passport/domain";
import { and, eq, gt, isNull, ne, type SQL, sql } from "drizzle-orm";
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
    /** Leaves the scheduler's claim in place: the binding's own claimed check still runs (a renewal's companion). */
    keepClaim?: boolean;
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
      ...(proof.keepClaim ? {} : { checkClaim: null }),
      checkFailures: 0,
      checkLog: appendedLog({ at: proof.at, outcome: "verified", reason: null }),
    })
    .where(eq(bindings.id, bindingId));
}

/**
 * Records a successful check that renews a proof the record still states truthfully (a held
 * renewal, docs/bindings.md "Renewals"): the check's log and time, failures reset, the claim
 * released and the next check due before the *published* proof's re-check window. Nothing
 * published changes, so no record version, event, evidence or publication row is written.
 *
 * One conditional statement: it writes only while the binding is still verified by the proof read
 * (`freshUntil`, `method`), its evidence item is current, the passport awaits no re-evaluation and
 * is not retired, and (for a scheduled check) `claim` is still the binding's. Returns whether it
 * wrote; when it did not, the caller publishes the renewal as a new version instead.
 */
export async function holdRenewal(
  db: Database,
  bindingId: string,
  held: {
    at: string;
    method: NonNullable<BindingRow["verificationMethod"]>;
    freshUntil: string;
    /** The next check, unless one is already set inside the published proof's renewal `window`. */
    nextCheckAt: string;
    window: { opens: string; closes: string };
    claim?: string;
  },
): Promise<boolean> {
  const written = await db
    .update(bindings)
    .set({
      lastCheckedAt: held.at,
      lastCheckResult: `verified by ${held.method}`,
      // A next check already inside the published proof's renewal window (one a renewal set for
      // the passport's bindings together) is kept; the claim's lease is not.
      nextCheckAt: sql`CASE WHEN ${bindings.nextCheckAt} BETWEEN ${held.window.opens} AND ${held.window.closes}
        THEN ${bindings.nextCheckAt} ELSE ${held.nextCheckAt} END`,
      checkClaim: null,
      checkFailures: 0,
      checkLog: appendedLog({ at: held.at, outcome: "verified", reason: null }),
    })
    .where(
      and(
        eq(bindings.id, bindingId),
        eq(bindings.verificationState, "verified"),
        eq(bindings.verificationMethod, held.method),
        eq(bindings.verificationFreshUntil, held.freshUntil),
        held.claim === undefined ? undefined : eq(bindings.checkClaim, held.claim),
        sql`EXISTS (SELECT 1 FROM evidence e WHERE e.id = ${bindings.verificationEvidenceId} AND e.withdrawn_at IS NULL)`,
        sql`EXISTS (SELECT 1 FROM passports p WHERE p.id = ${bindings.passportId}
          AND p.recheck_since IS NULL AND p.lifecycle != 'retired')`,
      ),
    )
    .returning({ id: bindings.id });
  return written.length > 0;
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

/**
 * The passport's other verified bindings, besides `bindingId`, that the same scheduler claim took:
 * due in the same run, they are renewed in one record version (docs/bindings.md, "Renewals").
 */
export function renewalCompanions(
  db: Database,
  passportId: string,
  bindingId: string,
  claim: string,
  limit: number,
): Promise<BindingRow[]> {
  return db
    .select()
    .from(bindings)
    .where(
      and(
        eq(bindings.passportId, passportId),
        ne(bindings.id, bindingId),
        eq(bindings.verificationState, "verified"),
        eq(bindings.checkClaim, claim),
      ),
    )
    .orderBy(bindings.nextCheckAt)
    .limit(limit);
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
 * Retiring a passport takes its bindings off the schedule in the retirement's own batch, so none
 * is due here (`runScheduledCheck` still skips one it meets).
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
        WHERE b.next_check_at <= ${page.now}
      )
      WHERE turn <= ${page.perOrganisation}
      ORDER BY turn, due
      LIMIT ${page.limit}
    ) AS picked
    WHERE bindings.id = picked.claimed_id
    RETURNING id AS binding_id, passport_id`);
}

/** Commits a check's change (its statements from `commitChangeStatements`) in one batch. */
export async function commitCheck(db: Database, statements: ReturnType<typeof commitChangeStatements>) {
  await db.batch(statements);
}

/** Passports of other organisations, not retired, that hold the same binding verified. */
export function otherVerifiedHolders(
  db: Database,
  organisationId: string,
  binding: Pick<BindingRow, "class" | "value">,
) {
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

// Re-evaluation (docs/lifecycle.md#re-evaluation). What a flagged passport `p` still waits for,
// written once as SQL so the reads that show it and the statement that clears the flag agree:
// - a binding that held proof when the re-evaluation began and has not been verified since
//   (still verified by an older check, or lapsed since);
// - a claim whose current evidence is all from before, with no current, fresh item of the same
//   claim observed and written since (renewed by a check, or asserted or attested again).

/** SQL true when binding `b` still waits for a passing check since `since` (an SQL expression). */
const bindingPending = (since: string) => `(
  (b.verification_state = 'verified' AND b.verified_at < ${since})
  OR (b.verification_state = 'lapsed' AND b.lapsed_at >= ${since}))`;

/**
 * SQL true when evidence item `e` of passport `passportId` is from before `since` and its claim has
 * no current item observed and written since that is still fresh at `now` (SQL expressions all).
 */
const claimPending = (since: string, passportId: string, now: string) => `(
  e.withdrawn_at IS NULL AND e.created_at < ${since}
  AND NOT EXISTS (
    SELECT 1 FROM evidence f WHERE f.passport_id = ${passportId} AND f.claim = e.claim
      AND f.withdrawn_at IS NULL AND f.created_at >= ${since} AND f.observed_at >= ${since}
      AND (f.fresh_until IS NULL OR f.fresh_until > ${now})))`;

/** SQL true when passport `p`'s re-evaluation waits for nothing more at `now` (an SQL expression). */
const nothingPending = (now: string) => `
  NOT EXISTS (SELECT 1 FROM bindings b WHERE b.passport_id = p.id AND ${bindingPending("p.recheck_since")})
  AND NOT EXISTS (SELECT 1 FROM evidence e WHERE e.passport_id = p.id AND ${claimPending("p.recheck_since", "p.id", now)})`;

interface PendingBinding {
  id: string;
  class: string;
  value: string;
  verification_state: "verified" | "lapsed";
  next_check_at: string | null;
  last_checked_at: string | null;
  last_check_result: string | null;
}

// These statements go to D1 as written (as `readPage` in db/passports.ts does): drizzle's batch
// takes only its builders, and each of them is one statement with correlated subqueries.

/** What the passport's re-evaluation that began at `since` still waits for, at `now`. */
export async function pendingReevaluation(db: Database, passportId: string, since: string, now: string) {
  const d1 = db.$client;
  const [pendingBindings, pendingClaims] = await d1.batch([
    d1
      .prepare(
        `SELECT b.id, b.class, b.value, b.verification_state, b.next_check_at, b.last_checked_at, b.last_check_result
        FROM bindings b WHERE b.passport_id = ?1 AND ${bindingPending("?2")} ORDER BY b.class, b.value`,
      )
      .bind(passportId, since),
    d1
      .prepare(
        `SELECT DISTINCT e.claim FROM evidence e WHERE e.passport_id = ?1 AND ${claimPending("?2", "?1", "?3")} ORDER BY e.claim`,
      )
      .bind(passportId, since, now),
  ]);
  return {
    bindings: (pendingBindings?.results ?? []) as unknown as PendingBinding[],
    claims: ((pendingClaims?.results ?? []) as { claim: string }[]).map((row) => row.claim),
  };
}

/**
 * Clears the re-check flag of the passport at `version` as its next record version, with its
 * history event and outbox row, only if the re-evaluation that began at `since` waits for nothing
 * more: one batch whose first statement decides (the conditions sit in its WHERE), the other two
 * follow only the version it wrote. Returns whether it cleared the flag. A concurrent change that
 * took the next version leaves the first statement nothing to update, so the batch writes nothing
 * (it does not fail) and this returns false; the caller tries again later. The history event and
 * outbox row are those of `commitChangeStatements` and `enqueuePublication`, written here as SQL
 * because each must be conditioned on the update having happened.
 */
export async function clearRecheckIfPassed(
  db: Database,
  passport: { id: string; version: number; since: string },
  event: { actor: string; at: string; detail: Record<string, unknown> },
): Promise<boolean> {
  const d1 = db.$client;
  const next = passport.version + 1;
  // ?1 id, ?2 the version written, ?3 the time
  const wrote = "p.id = ?1 AND p.record_version = ?2 AND p.recheck_required = 0 AND p.updated_at = ?3";
  const [cleared] = await d1.batch([
    d1
      .prepare(
        `UPDATE passports AS p SET recheck_required = 0, recheck_since = NULL, record_version = ?2,
          updated_at = ?3, state_as_of = ?3
        WHERE p.id = ?1 AND p.record_version = ?4 AND p.recheck_required = 1 AND p.recheck_since = ?5
          AND ${nothingPending("?3")}
        RETURNING id`,
      )
      .bind(passport.id, next, event.at, passport.version, passport.since),
    d1
      .prepare(
        `INSERT INTO events (passport_id, organisation_id, actor, at, kind, detail, record_version)
        SELECT p.id, p.organisation_id, ?4, ?3, 'state.rechecked', ?5, p.record_version FROM passports AS p WHERE ${wrote}`,
      )
      .bind(passport.id, next, event.at, event.actor, JSON.stringify(event.detail)),
    d1
      .prepare(
        `INSERT INTO outbox (passport_id, record_version, next_attempt_at)
        SELECT p.id, p.record_version, ?3 FROM passports AS p WHERE ${wrote}
        ON CONFLICT (passport_id) DO UPDATE SET record_version = excluded.record_version,
          next_attempt_at = excluded.next_attempt_at, attempts = 0, bulk = 0`,
      )
      .bind(passport.id, next, event.at),
  ]);
  return (cleared?.results.length ?? 0) > 0;
}

/** Flagged passports, oldest re-evaluation first, whose re-evaluation waits for nothing more (passports_recheck). */
export async function reevaluationsToSettle(db: Database, now: string, limit: number) {
  const { results } = await db.$client
    .prepare(
      `SELECT p.id FROM passports AS p INDEXED BY passports_recheck
      WHERE p.recheck_required = 1 AND p.recheck_since IS NOT NULL AND ${nothingPending("?1")}
      ORDER BY p.recheck_since LIMIT ?2`,
    )
    .bind(now, limit)
    .all<{ id: string }>();
  return results;
}

/**
 * Makes the bindings a re-evaluation that began at `since` still waits for due at `now`, except
 * those whose check is in flight (claimed): a member's "re-check now". Returns how many.
 */
export async function schedulePendingChecks(db: Database, passportId: string, since: string, now: string) {
  const { results } = await db.$client
    .prepare(
      `UPDATE bindings AS b SET next_check_at = ?3
      WHERE b.passport_id = ?1 AND b.check_claim IS NULL AND ${bindingPending("?2")} RETURNING id`,
    )
    .bind(passportId, since, now)
    .all<{ id: string }>();
  return results.length;
}

/**
 * The keys the passport proves at `now`: those its verified signing_keys bindings' directories
 * held at their last check, while that proof is fresh (withdrawn keys left out).
 */
export async function provenSigningKeys(db: Database, passportId: string, now: string): Promise<ObservedSigningKey[]> {
  const rows = await db
    .select({ keys: bindings.observedKeys })
    .from(bindings)
    .where(
      and(
        eq(bindings.passportId, passportId),
        eq(bindings.class, "signing_keys"),
        eq(bindings.verificationState, "verified"),
        gt(bindings.verificationFreshUntil, now),
      ),
    );
  return rows.flatMap((row) => (row.keys ?? []).filter((key) => !key.withdrawnAt));
}
