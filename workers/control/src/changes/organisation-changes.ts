import type { Database } from "../db/client.ts";
import { changeablePassportsIn } from "../db/organisation-changes.ts";
import { commitChangeStatements, findPassport } from "../db/passports.ts";
import { type PublishEnv, publishOrDefer } from "../publication/publish.ts";

const ATTEMPTS = 3;

/**
 * Publishes the organisation change in every record that names the organisation: its own
 * passports and, when its name changed, its children's (whose records name it as the parent).
 * Each passport gets the change as its next record version with a history event, so mirrors see
 * a newer version; a passport that changed concurrently is re-read and tried again. Retired
 * passports stay exactly as they were.
 */
export async function republishOrganisation(
  env: PublishEnv,
  db: Database,
  organisationIds: string[],
  change: { kind: string; detail: Record<string, unknown> },
  actor: string,
): Promise<number> {
  const affected = await changeablePassportsIn(db, organisationIds);
  for (const { id } of affected) {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const current = await findPassport(db, id);
      if (!current || current.lifecycle === "retired") break;
      try {
        await db.batch(commitChangeStatements(db, current, change, actor, new Date().toISOString()));
        break;
      } catch (error) {
        // The per-version unique event index refused: someone else changed it first.
        if (attempt === ATTEMPTS || !String((error as { cause?: unknown })?.cause ?? error).includes("UNIQUE")) {
          throw error;
        }
      }
    }
    await publishOrDefer(env, id);
  }
  return affected.length;
}
