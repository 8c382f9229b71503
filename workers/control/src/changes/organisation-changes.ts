import type { SQL } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { changeablePassportsIn } from "../db/organisation-changes.ts";
import { inGroupsOf, type PublishEnv, publishOrDefer } from "../publication/index.ts";

/**
 * How many passports an organisation change publishes in its own request. The change is already
 * committed as every record's next version with an outbox row (`passportVersionStatements`); the
 * scheduled drain publishes the rest (after any other due publication), so a request stays within a Worker's subrequest limit however
 * many passports the organisation holds.
 */
export const PUBLISHED_IN_REQUEST = 20;
const PUBLISHING_AT_ONCE = 5;

/**
 * Publishes the first passports in `scope` whose records an organisation change just gave a new
 * version; the rest wait in the outbox for the drain. Returns how many were published here.
 */
export async function publishOrganisationChange(env: PublishEnv, db: Database, scope: SQL): Promise<number> {
  const changed = await changeablePassportsIn(db, scope, PUBLISHED_IN_REQUEST);
  // Each passport has its own sequencer: a few at a time shortens the request without a burst.
  await inGroupsOf(PUBLISHING_AT_ONCE, changed, ({ id }) => publishOrDefer(env, id));
  return changed.length;
}
