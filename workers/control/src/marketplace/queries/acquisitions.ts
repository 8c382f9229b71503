import { and, asc, eq, gt, notInArray, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import {
  type AcquisitionStatus,
  acquisitionStages,
  acquisitions,
  marketplaceAccounts,
  type StageStatus,
} from "../../db/acquisitions-schema.ts";
import type { Database } from "../../db/client.ts";
import { members, passports } from "../../db/schema.ts";
import { randomReference } from "../crypto.ts";
import { STAGES, type Stage } from "../stages.ts";

export type AcquisitionRow = typeof acquisitions.$inferSelect;
export type StageRow = typeof acquisitionStages.$inferSelect;

export interface NewAcquisition {
  tokenHash: string;
  claimHash: string;
  claimExpiresAt: string;
  offerType?: string;
  at: string;
}

/**
 * Records the handoff of one registration token, keyed on the token's hash: posting the same
 * token again finds the same acquisition (the unique index decides, not this code) and replaces
 * its claim reference with the new one. One D1 batch: the acquisition's upsert, then its handoff
 * stage inserted from the row it left, which says whether this call created it.
 * Returns the acquisition and whether this call created it.
 * @example
 * const { acquisition, created } = await recordAcquisition(db, { tokenHash, claimHash, claimExpiresAt, at });
 */
export async function recordAcquisition(db: Database, input: NewAcquisition) {
  const proposedId = randomReference("acq_");
  const outcome = sql`CASE WHEN ${acquisitions.id} = ${proposedId} THEN 'received' ELSE 'received again (same token)' END`;
  const [[row]] = await db.batch([
    db
      .insert(acquisitions)
      .values({
        id: proposedId,
        tokenHash: input.tokenHash,
        status: "received",
        offerType: input.offerType,
        claimHash: input.claimHash,
        claimExpiresAt: input.claimExpiresAt,
        createdAt: input.at,
        updatedAt: input.at,
      })
      .onConflictDoUpdate({
        target: acquisitions.tokenHash,
        set: { claimHash: input.claimHash, claimExpiresAt: input.claimExpiresAt, updatedAt: input.at },
      })
      .returning(),
    // The columns in the table's order: acquisition, stage, status, attempts, outcome, error
    // code and message, started, updated.
    db
      .insert(acquisitionStages)
      .select(
        sql`select ${acquisitions.id}, 'registration_token_handoff', 'succeeded', 1, ${outcome}, null, null, ${input.at}, ${input.at} from ${acquisitions} where ${acquisitions.tokenHash} = ${input.tokenHash}`,
      )
      .onConflictDoUpdate(stageConflict({ status: "succeeded", at: input.at }, sql`excluded.outcome`)),
  ]);
  if (!row) throw new Error("acquisition upsert returned nothing");
  return { acquisition: row, created: row.id === proposedId };
}

export async function findAcquisition(db: Database, id: string): Promise<AcquisitionRow | undefined> {
  const [row] = await db.select().from(acquisitions).where(eq(acquisitions.id, id));
  return row;
}

/** The acquisition's stages in the order they run. */
export async function stagesOf(db: Database, id: string): Promise<StageRow[]> {
  const rows = await db
    .select()
    .from(acquisitionStages)
    .where(eq(acquisitionStages.acquisitionId, id))
    .orderBy(asc(acquisitionStages.startedAt));
  return rows.sort((a, b) => STAGES.indexOf(a.stage as Stage) - STAGES.indexOf(b.stage as Stage));
}

export interface StageUpdate {
  status: StageStatus;
  outcome?: string;
  errorCode?: string;
  errorMessage?: string;
  attempts?: number;
  at: string;
}

/**
 * Upserts one stage's progress. A stage that already succeeded stays succeeded, so a duplicate
 * or late delivery never makes finished progress look undone.
 */
export async function recordStage(db: Database, acquisitionId: string, stage: Stage, update: StageUpdate) {
  await stageStatement(db, acquisitionId, stage, update);
}

function stageStatement(db: Database, acquisitionId: string, stage: Stage, update: StageUpdate) {
  return db
    .insert(acquisitionStages)
    .values({
      acquisitionId,
      stage,
      status: update.status,
      attempts: update.attempts ?? 1,
      outcome: update.outcome ?? null,
      errorCode: update.errorCode ?? null,
      errorMessage: update.errorMessage ?? null,
      startedAt: update.at,
      updatedAt: update.at,
    })
    .onConflictDoUpdate(stageConflict(update));
}

/** A stage row written again: a stage that already succeeded stays as it is. */
function stageConflict(update: StageUpdate, outcome: SQL | string | null = update.outcome ?? null) {
  return {
    target: [acquisitionStages.acquisitionId, acquisitionStages.stage],
    set: {
      status: update.status,
      attempts: sql`max(${acquisitionStages.attempts}, ${update.attempts ?? 1})`,
      outcome,
      errorCode: update.errorCode ?? null,
      errorMessage: update.errorMessage ?? null,
      updatedAt: update.at,
    },
    setWhere: sql`${acquisitionStages.status} <> 'succeeded'`,
  };
}

const FINAL: AcquisitionStatus[] = ["completed", "failed"];

type AcquisitionPatch = SQLiteUpdateSetSource<typeof acquisitions>;

/** Updates an acquisition that is still in progress; a finished one is left as it is. */
function patchStatement(db: Database, id: string, patch: AcquisitionPatch) {
  return db
    .update(acquisitions)
    .set(patch)
    .where(and(eq(acquisitions.id, id), notInArray(acquisitions.status, FINAL)));
}

/**
 * What one stage wrote, committed as one D1 batch (one round trip, all or nothing): the rows of
 * the stages it settled or started, in order, and the acquisition's columns it set. `patch`
 * changes an acquisition still in progress only; `account` and `passport` are recorded whatever
 * its status (a claim sets them up after the acquisition completed).
 */
export interface Progress {
  stages: { stage: Stage; update: StageUpdate }[];
  patch?: AcquisitionPatch;
  account?: AccountRecord;
  passport?: PassportRecord;
}

/** Records one stage's progress in one round trip (`Progress`). */
export async function recordProgress(db: Database, id: string, progress: Progress) {
  const statements: BatchItem<"sqlite">[] = progress.stages.map(({ stage, update }) =>
    stageStatement(db, id, stage, update),
  );
  if (progress.patch) statements.push(patchStatement(db, id, progress.patch));
  if (progress.account) statements.push(accountStatement(db, id, progress.account));
  if (progress.passport) statements.push(passportStatement(db, id, progress.passport));
  const [first, ...rest] = statements;
  if (first) await db.batch([first, ...rest]);
}

/**
 * An outcome column where the first-time outcome wins: of two racing deliveries, the one that
 * created the account (or issued the passport) is what the acquisition reports, not the duplicate.
 */
function firstTimeWins(
  column: typeof acquisitions.accountOutcome | typeof acquisitions.passportOutcome,
  value: string,
  firstTime: string,
) {
  return value === firstTime ? sql`${value}` : sql`coalesce(${column}, ${value})`;
}

/**
 * Records the account an acquisition set up (or reused); a reused account never overwrites the
 * outcome of the delivery that created or linked it.
 */
interface AccountRecord {
  marketplaceCustomerId: string;
  marketplaceAccountId: string;
  outcome: string;
  firstTime: string;
  at: string;
}

function accountStatement(db: Database, id: string, input: AccountRecord) {
  return db
    .update(acquisitions)
    .set({
      marketplaceCustomerId: input.marketplaceCustomerId,
      marketplaceAccountId: input.marketplaceAccountId,
      accountOutcome: firstTimeWins(acquisitions.accountOutcome, input.outcome, input.firstTime),
      updatedAt: input.at,
    })
    .where(eq(acquisitions.id, id));
}

interface PassportRecord {
  passportId: string;
  outcome: string;
  at: string;
}

/** Records the passport an acquisition issued or reused; `issued` wins over a racing `reused`. */
function passportStatement(db: Database, id: string, input: PassportRecord) {
  return db
    .update(acquisitions)
    .set({
      passportId: input.passportId,
      passportOutcome: firstTimeWins(acquisitions.passportOutcome, input.outcome, "issued"),
      updatedAt: input.at,
    })
    .where(eq(acquisitions.id, id));
}

/**
 * Uses up the claim reference: succeeds only for the current, unexpired hash, and only once.
 * Returns whether this call was the one that used it.
 */
export async function consumeClaim(db: Database, id: string, claimHash: string, subject: string, at: string) {
  const rows = await db
    .update(acquisitions)
    .set({ claimHash: null, claimExpiresAt: null, claimedBy: subject, claimedAt: at, updatedAt: at })
    .where(and(eq(acquisitions.id, id), eq(acquisitions.claimHash, claimHash), gt(acquisitions.claimExpiresAt, at)))
    .returning({ id: acquisitions.id });
  return rows.length === 1;
}

/** The marketplace account an acquisition set up, once it has one. */
export async function accountOf(db: Database, row: AcquisitionRow) {
  if (!row.marketplaceAccountId) return undefined;
  const [account] = await db
    .select()
    .from(marketplaceAccounts)
    .where(eq(marketplaceAccounts.id, row.marketplaceAccountId));
  return account;
}

export async function hasMembers(db: Database, organisationId: string): Promise<boolean> {
  const [someone] = await db
    .select({ subject: members.subject })
    .from(members)
    .where(eq(members.organisationId, organisationId))
    .limit(1);
  return someone !== undefined;
}

/**
 * Makes `subject` the owner of an organisation nobody holds yet. The insert itself checks that the
 * organisation has no members, so two claimants racing for one account cannot both win. True when
 * `subject` is now a member.
 */
export async function becomeFirstOwner(db: Database, organisationId: string, subject: string): Promise<boolean> {
  await db.run(
    sql`INSERT INTO ${members} (organisation_id, subject, role) SELECT ${organisationId}, ${subject}, 'owner'
        WHERE NOT EXISTS (SELECT 1 FROM ${members} WHERE ${members.organisationId} = ${organisationId})
        ON CONFLICT DO NOTHING`,
  );
  const [became] = await db
    .select({ role: members.role })
    .from(members)
    .where(and(eq(members.organisationId, organisationId), eq(members.subject, subject)));
  return became !== undefined;
}

/**
 * An acquisition as a run of its stages starts from it, in one read: with when an earlier
 * attempt's ResolveCustomer succeeded (the stage row is frozen once it succeeded), or undefined.
 */
export async function acquisitionToRun(db: Database, id: string) {
  const [found] = await db
    .select({ acquisition: acquisitions, resolvedAt: acquisitionStages.updatedAt })
    .from(acquisitions)
    .leftJoin(
      acquisitionStages,
      and(eq(acquisitionStages.acquisitionId, acquisitions.id), eq(acquisitionStages.stage, "customer_identification")),
    )
    .where(eq(acquisitions.id, id));
  return found;
}

/** The lifecycle of an acquisition's passport now (an adopted suspended one stays suspended). */
export async function lifecycleOf(db: Database, passportId: string): Promise<string | null> {
  const [row] = await db.select({ lifecycle: passports.lifecycle }).from(passports).where(eq(passports.id, passportId));
  return row?.lifecycle ?? null;
}
