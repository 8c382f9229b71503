import { and, inArray, isNull, lt } from "drizzle-orm";
import { acquisitionStages, acquisitions } from "../../db/acquisitions-schema.ts";
import type { Database } from "../../db/client.ts";

/**
 * How long an unclaimed acquisition is kept after its last change (docs/acquisition.md "Expiry").
 * Its claim reference lasts 30 minutes and can only be renewed by posting the registration token
 * again, which lives a few hours at most; a day later nobody can reach the acquisition any more.
 */
const UNCLAIMED_ACQUISITION_TTL_HOURS = 24;
/** At most this many acquisitions are deleted per run, so one run stays small; the next takes the rest. */
const DELETE_BATCH = 200;

/**
 * Deletes acquisitions nobody claimed (completed, failed or abandoned in progress) whose last
 * change is older than the bound, with their stages. The account, organisations and passport an
 * acquisition set up are kept: a later subscription of the same cloud account reuses them, and its
 * claim hands them over. Claimed acquisitions are kept as the record of who claimed what.
 * Returns how many were deleted.
 * @example
 * await deleteExpiredAcquisitions(database(env.DB), new Date(controller.scheduledTime));
 */
export async function deleteExpiredAcquisitions(db: Database, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - UNCLAIMED_ACQUISITION_TTL_HOURS * 3_600_000).toISOString();
  const expired = await db
    .select({ id: acquisitions.id })
    .from(acquisitions)
    .where(and(isNull(acquisitions.claimedBy), lt(acquisitions.updatedAt, cutoff)))
    .limit(DELETE_BATCH);
  const ids = expired.map((row) => row.id);
  if (ids.length === 0) return 0;
  // Checked again in the delete itself, so a claim landing between the two statements keeps its row.
  const stillUnclaimed = and(inArray(acquisitions.id, ids), isNull(acquisitions.claimedBy));
  await db.batch([
    db
      .delete(acquisitionStages)
      .where(
        inArray(
          acquisitionStages.acquisitionId,
          db.select({ id: acquisitions.id }).from(acquisitions).where(stillUnclaimed),
        ),
      ),
    db.delete(acquisitions).where(stillUnclaimed),
  ]);
  console.log(JSON.stringify({ level: "info", event: "acquisitions_expired", count: ids.length }));
  return ids.length;
}
