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
