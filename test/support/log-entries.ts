import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { transparencyLog } from "../../workers/control/src/publication/log/append.ts";

/** One passport's entries in the transparency log's own storage, in log order. */
export function logEntriesOf(identityId: string) {
  return runInDurableObject(transparencyLog(env), (_instance, state) =>
    state.storage.sql
      .exec<{ idx: number; record_version: number }>(
        "SELECT idx, record_version FROM entries WHERE identity_id = ? ORDER BY idx",
        identityId,
      )
      .toArray(),
  );
}

/** The record versions of one passport in the transparency log, in log order. */
export async function loggedVersions(identityId: string): Promise<number[]> {
  return (await logEntriesOf(identityId)).map((row) => row.record_version);
}
