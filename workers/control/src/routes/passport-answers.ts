import type { Context } from "hono";
import { requiredRole } from "../access/roles.ts";
import { passportEtag, passportView } from "../api/views.ts";
import { type ChangeRequest, commitChange } from "../changes/apply.ts";
import type { AppEnv } from "../context.ts";
import type { Role } from "../db/organisations.ts";
import { loadAggregate, type PassportChange, type PassportRow, type StoredPassport } from "../db/passports.ts";
import { withUseTargets } from "../db/uses.ts";
import { publishOrDefer } from "../publication/index.ts";

// How the passport routes answer: the passport's view with its ETag, `If-Match` read as the record
// versions the caller expects (a stale version is `StaleVersion`, answered as 412 by `api/problem.ts`). The rules are in changes/.

type AppContext = Context<AppEnv>;

/**
 * The record versions an `If-Match` header accepts (strong comparison against `"v{record_version}"`);
 * any version for no header or `*`. A tag in any other form matches no version, and so does an
 * empty header (RFC 9110: an empty list of tags): a client that sends one means a condition, so it
 * gets 412, never an unconditional write over someone else's change.
 */
export function expectedVersions(header: string | undefined): number[] | undefined {
  if (header === undefined) return undefined;
  const tags = header.split(",").map((tag) => tag.trim());
  if (tags.includes("*")) return undefined;
  return tags.map((tag) => Number(/^"v(\d+)"$/.exec(tag)?.[1] ?? Number.NaN));
}

/** Responds with the passport's full view and its ETag. */
export async function respondWithPassport(c: AppContext, id: string, status: 200 | 201 = 200) {
  const stored = await loadAggregate(c.get("db"), id);
  if (!stored) throw new Error(`passport ${id} vanished`);
  return respondWithStored(c, stored, status);
}

/** Responds with a passport read in the batch that changed it (`commitAndLoad`). */
async function respondWithStored(c: AppContext, stored: StoredPassport, status: 200 | 201 = 200) {
  c.header("etag", passportEtag(stored.passport.recordVersion));
  const shown = await withUseTargets(c.get("shards"), stored);
  return c.json(passportView(shown, c.env, shown.pending), status);
}

/**
 * Publishes the version just committed and answers with the passport as that commit left it: the
 * publication is `published` when the sequencer wrote this version or a newer one, otherwise the
 * outbox row committed with the change is still owed.
 */
export async function publishAndRespond(c: AppContext, stored: StoredPassport, status: 200 | 201 = 200) {
  const published = await publishOrDefer(c.env, stored.passport.id);
  const settled = published !== undefined && published >= stored.passport.recordVersion;
  return respondWithStored(c, { ...stored, pending: settled ? undefined : stored.pending }, status);
}

/**
 * Applies one material change with the role the route declared (`operation({ role })`), or the
 * higher one a rule asks for (`needs`, e.g. admin for a lifecycle change), publishes it and responds
 * with the updated passport.
 */
export async function applyChange(
  c: AppContext,
  id: string,
  build: (passport: PassportRow) => PassportChange | Promise<PassportChange>,
  needs?: Role,
) {
  const declared = c.get("declaredRole");
  const request: ChangeRequest = {
    db: c.get("db"),
    shards: c.get("shards"),
    subject: c.get("principal").subject,
    minimum: requiredRole(declared, needs),
    expectedVersions: expectedVersions(c.req.header("if-match")),
  };
  return publishAndRespond(c, await commitChange(request, id, build));
}
