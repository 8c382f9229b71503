import { mintIdentityId } from "@passport/domain";
import type { Context } from "hono";
import { requireMembership, requireRole } from "../access/membership.ts";
import { HttpProblem } from "../api/problem.ts";
import type { CreatePassportRequest } from "../api/requests.ts";
import { passportEtag, passportView } from "../api/views.ts";
import type { AppEnv } from "../context.ts";
import type { Database } from "../db/client.ts";
import type { Role } from "../db/organisations.ts";
import {
  commitAndLoad,
  commitChangeStatements,
  createPassportStatements,
  findPassport,
  isDuplicateIdentityViolation,
  loadAggregate,
  type PassportChange,
  type PassportRow,
  passportWithMembership,
  type StoredPassport,
} from "../db/passports.ts";
import { publishOrDefer } from "../publication/publish.ts";
import {
  duplicateRaceRefusal,
  refuseDirectApiPassport,
  refuseDuplicates,
  refuseRepeatedBindings,
} from "./passport-changes.ts";

type AppContext = Context<AppEnv>;

/** Enforces `If-Match` when the client sends it (strong comparison against `"v{record_version}"`). */
function checkIfMatch(header: string | undefined, passport: PassportRow): void {
  if (!header) return;
  const tags = header.split(",").map((tag) => tag.trim());
  if (tags.includes("*") || tags.includes(passportEtag(passport.recordVersion))) return;
  throw new HttpProblem("precondition-failed", {
    detail: `The passport is at record version ${passport.recordVersion}; re-read it and apply your change again.`,
    current_etag: passportEtag(passport.recordVersion),
  });
}

/** Responds with the passport's full view and its ETag. */
export async function respondWithPassport(c: AppContext, id: string, status: 200 | 201 = 200) {
  const stored = await loadAggregate(c.get("db"), id);
  if (!stored) throw new Error(`passport ${id} vanished`);
  return respondWithStored(c, stored, status);
}

/** Responds with a passport read in the batch that changed it (`commitAndLoad`). */
function respondWithStored(c: AppContext, stored: StoredPassport, status: 200 | 201 = 200) {
  c.header("etag", passportEtag(stored.passport.recordVersion));
  return c.json(passportView(stored, c.env, stored.pending), status);
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
 * Names the passport that holds the primary binding a change collided with: the binding it added,
 * or, for a transfer, the passport's own bindings in the organisation it was moving to.
 */
async function refusalOfRacingDuplicate(db: Database, passport: PassportRow, change: PassportChange) {
  const organisationId = change.set?.organisationId ?? passport.organisationId;
  const candidates =
    change.kind === "binding.added"
      ? [change.detail as { class: string; value: string }]
      : ((await loadAggregate(db, passport.id))?.bindings ?? []);
  return duplicateRaceRefusal(db, organisationId, passport.family, candidates, passport.id);
}

function isUniqueViolation(error: unknown): boolean {
  return String((error as { cause?: unknown })?.cause ?? error).includes("UNIQUE constraint failed");
}

/**
 * Creates a passport in an organisation the caller may edit: duplicate refusal, then the passport,
 * its bindings, history event and outbox row in one batch that also reads it back. Publication is
 * the caller's.
 */
export async function commitCreation(db: Database, subject: string, body: CreatePassportRequest) {
  refuseRepeatedBindings(body.bindings);
  const membership = await requireMembership(db, subject, body.organisation_id, "editor");
  refuseDirectApiPassport(body.family, membership.role);
  if (!body.distinct_object_reason) {
    await refuseDuplicates(db, membership.organisationId, body.family, body.bindings);
  }
  const id = mintIdentityId();
  const statements = createPassportStatements(db, {
    id,
    organisationId: membership.organisationId,
    family: body.family,
    displayName: body.display_name,
    environment: body.environment,
    version: body.version,
    bindings: body.bindings,
    distinctReason: body.distinct_object_reason,
    actor: subject,
    at: new Date().toISOString(),
  });
  try {
    return await commitAndLoad(db, id, statements);
  } catch (error) {
    if (!isDuplicateIdentityViolation(error)) throw error;
    throw await duplicateRaceRefusal(db, membership.organisationId, body.family, body.bindings);
  }
}

/** Who asks for a change, and the `If-Match` they sent. */
export interface ChangeRequest {
  db: Database;
  subject: string;
  ifMatch?: string;
}

/**
 * Commits one material change to a passport the caller may see: role check, `If-Match`, refusal
 * on retired passports, the change committed as the next record version with its history event and
 * outbox row. Returns the passport as the change left it; publication is the caller's.
 */
export async function commitChange(
  { db, subject, ifMatch }: ChangeRequest,
  id: string,
  minimum: Role,
  build: (passport: PassportRow) => PassportChange | Promise<PassportChange>,
): Promise<StoredPassport> {
  const found = await passportWithMembership(db, subject, id);
  if (!found)
    throw new HttpProblem("identity-not-found", { detail: "No passport with this id in your organisations." });
  const { passport, membership } = found;
  requireRole(membership, minimum);
  checkIfMatch(ifMatch, passport);
  if (passport.lifecycle === "retired") {
    throw new HttpProblem("invalid-transition", {
      detail: "Retired passports are kept exactly as they were; they cannot be changed.",
      allowed: [],
    });
  }
  const change = await build(passport);
  try {
    return await commitAndLoad(db, id, commitChangeStatements(db, passport, change, subject, new Date().toISOString()));
  } catch (error) {
    if (isDuplicateIdentityViolation(error)) throw await refusalOfRacingDuplicate(db, passport, change);
    if (!isUniqueViolation(error)) throw error;
    const current = await findPassport(db, id);
    throw new HttpProblem("precondition-failed", {
      detail: "The passport changed while your request was being applied; re-read it and try again.",
      ...(current ? { current_etag: passportEtag(current.recordVersion) } : {}),
    });
  }
}

/** Applies one material change (`commitChange`), publishes it and responds with the updated passport. */
export async function applyChange(
  c: AppContext,
  id: string,
  minimum: Role,
  build: (passport: PassportRow) => PassportChange | Promise<PassportChange>,
) {
  const request = { db: c.get("db"), subject: c.get("principal").subject, ifMatch: c.req.header("if-match") };
  return publishAndRespond(c, await commitChange(request, id, minimum, build));
}
