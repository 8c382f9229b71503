import { z } from "zod";
import { roleAtLeast } from "../access/roles.ts";
import type { Database } from "../db/client.ts";
import { movableAlone, moveOrganisation } from "../db/organisation-move.ts";
import { membershipIn, organisationWithParent } from "../db/organisations.ts";
import { type Shards, shardsOf } from "../db/shards.ts";
import { Refusal } from "../failures.ts";
import { type MarketplaceEnv, secret } from "./config.ts";
import { keyedHash } from "./crypto.ts";
import {
  adoptionCandidates,
  type ExistingOrganisation,
  MAX_ADOPTION_CANDIDATES,
  PassportNotAdoptable,
} from "./queries/accounts.ts";
import {
  type AcquisitionRow,
  accountOf,
  becomeFirstOwner,
  consumeClaim,
  findAcquisition,
  hasMembers,
  recordStage,
} from "./queries/acquisitions.ts";
import { setUpAtClaim } from "./stage-runner.ts";

// The claim's rules (spec 4.3 step 9): who may claim an acquisition, where its subscription
// belongs, and which passport it adopts. They raise `Refusal`s; `dashboard-routes.ts` answers.

/** What a claim sends. */
export const ClaimRequest = z
  .object({
    claim_reference: z.string().min(1).max(128),
    /** An organisation you own or administer to hold a first-time subscription; omitted: a new one. */
    organisation_id: z.string().min(1).max(128).optional(),
    /**
     * The organisation's adoptable passport (of the product's family) to adopt, when it has several;
     * a claim without it is refused with the candidates listed (`passport-choice-required`).
     */
    passport_id: z.string().min(1).max(128).optional(),
  })
  .strict();

export type ClaimRequest = z.infer<typeof ClaimRequest>;

export async function claimHash(env: MarketplaceEnv, reference: string): Promise<string> {
  return keyedHash(secret(env, "MARKETPLACE_TOKEN_HASH_KEY"), "claim-reference", reference);
}

/** Whether `hash` is the acquisition's current, unexpired claim reference. */
export function claimUsable(row: AcquisitionRow, hash: string, now: string): boolean {
  return row.claimHash === hash && !!row.claimExpiresAt && row.claimExpiresAt > now;
}

export const notFound = () =>
  new Refusal("acquisition-not-found", { detail: "No acquisition with this id is visible to you." });

/**
 * The organisation the claimant chose, checked: they must be its owner or admin. The marketplace's
 * rows refer to it by foreign key, so it must be in shard 0 with them (docs/sharding.md): one kept
 * in another shard is moved there first, its writes refused for the seconds the copy takes. One
 * tied to other organisations (a parent, sub-organisations, passports it operates), or that cannot
 * be moved within the request, is refused with `crosses-shards`, after the membership check so
 * that nobody else learns where an organisation is.
 */
async function chosenOrganisation(shards: Shards, db: Database, subject: string, organisationId: string | undefined) {
  if (!organisationId) return undefined;
  const { shard } = await shards.placementOf(organisationId);
  const membership = await membershipIn(shards.shard(shard), subject, organisationId);
  // An admin or owner may let a marketplace subscription be held by an existing organisation.
  if (!membership || !roleAtLeast(membership.role, "admin")) {
    throw new Refusal("forbidden", {
      detail: "You can link a subscription only to an organisation where you are an owner or admin.",
    });
  }
  if (shard !== 0) await moveToMarketplaceShard(shards, organisationId);
  const organisation = await organisationWithParent(db, organisationId);
  return { organisationId, parentOrganisationId: organisation?.organisation.parentId ?? organisationId };
}

async function moveToMarketplaceShard(shards: Shards, organisationId: string): Promise<void> {
  const refusal = (why: string) =>
    new Refusal("crosses-shards", {
      detail: `That organisation is kept in another database than the marketplace's accounts and ${why}, so it cannot hold a marketplace subscription. Choose no organisation to have a new one made.`,
    });
  if (!(await movableAlone(shards, organisationId))) {
    throw refusal("is tied to other organisations there (a parent, sub-organisations or passports it operates)");
  }
  try {
    const moved = await moveOrganisation(shards, organisationId, 0);
    console.log(JSON.stringify({ level: "info", event: "organisation_moved_for_marketplace", ...moved }));
  } catch (error) {
    // The move undid its copy and lifted its fence: the organisation is where it was.
    console.error(
      JSON.stringify({
        level: "error",
        event: "organisation_move_failed",
        organisation_id: organisationId,
        message: String(error),
      }),
    );
    throw refusal("could not be moved to it now");
  }
}

type Candidate = { id: string; displayName: string | null; lifecycle: string };

/** The passports offered to choose from, as the problem documents name them (a suspended one says so). */
function candidateList(candidates: Candidate[]) {
  return candidates.slice(0, MAX_ADOPTION_CANDIDATES).map((p) => ({
    identity_id: p.id,
    display_name: p.displayName,
    ...(p.lifecycle === "suspended" ? { lifecycle: "suspended" as const } : {}),
  }));
}

/**
 * The passport a claim adopts from the organisation that will hold the subscription (`target`):
 * the one the claimant chose, which must be one of its adoptable passports of the family; with no
 * choice, undefined (the only one is adopted, or a new one issued when there is none), unless it
 * has several: then the claimant must choose, and the refusal lists them. Checked before the claim
 * reference is used, so a refused claim can be sent again with a choice.
 */
async function choosePassport(
  db: Database,
  target: string | undefined,
  family: "api" | "agent",
  chosen: string | undefined,
): Promise<string | undefined> {
  const candidates = target ? await adoptionCandidates(db, target, family) : [];
  if (chosen) {
    if (candidates.some((p) => p.id === chosen)) return chosen;
    throw notAdoptable(chosen, candidates);
  }
  if (candidates.length > 1) {
    const count =
      candidates.length > MAX_ADOPTION_CANDIDATES ? `more than ${MAX_ADOPTION_CANDIDATES}` : String(candidates.length);
    throw new Refusal("passport-choice-required", {
      detail: `The organisation has ${count} ${candidates[0]?.lifecycle === "suspended" ? "suspended" : "active"} ${family === "api" ? "API" : "agent"} passports; choose the one this subscription adopts (passport_id).`,
      candidates: candidateList(candidates),
    });
  }
  return undefined;
}

function notAdoptable(chosen: string, candidates: Candidate[]) {
  return new Refusal("passport-not-adoptable", {
    detail: `Passport ${chosen} is not an adoptable passport of this family in the organisation that holds the subscription (one in use, or a suspended one when none is in use). Choose one of the candidates${candidates.length ? "" : ", or send no passport_id to issue a new one"}.`,
    passport_id: chosen,
    candidates: candidateList(candidates),
  });
}

/**
 * Sets up the account and passport of a cloud account seen for the first time, where the claimant
 * chose (spec 4.3 steps 6, 8, 1.6): their existing organisation (its API passport is reused) or a new
 * one they then own. Racing claims converge on the one account the unique keys let through.
 */
async function setUpForClaimant(
  env: MarketplaceEnv,
  db: Database,
  row: AcquisitionRow,
  subject: string,
  existing: ExistingOrganisation | undefined,
  chosenPassport: string | undefined,
) {
  let result: Awaited<ReturnType<typeof setUpAtClaim>>;
  try {
    result = await setUpAtClaim(env, db, row, { existing, chosenPassport });
  } catch (error) {
    // Suspended, moved or retired since the claim was checked: the reference stays with this
    // claimant (an unfinished claim), so they can choose again.
    if (error instanceof PassportNotAdoptable && chosenPassport) {
      const holder = existing?.organisationId ?? (await accountOf(db, row))?.organisationId;
      throw notAdoptable(
        chosenPassport,
        holder ? await adoptionCandidates(db, holder, row.family === "agent" ? "agent" : "api") : [],
      );
    }
    throw error;
  }
  const { organisationId, parentOrganisationId } = result.account;
  const member = await membershipIn(db, subject, organisationId);
  if (!member && !(await becomeFirstOwner(db, organisationId, subject))) {
    throw new Refusal("forbidden", { detail: "Another user claimed this marketplace account first." });
  }
  // A parent made by set-up is nobody's yet: its first owner is the account's, so they can name it.
  if (result.accountOutcome !== "linked" && parentOrganisationId !== organisationId) {
    await becomeFirstOwner(db, parentOrganisationId, subject);
  }
  return { accountOutcome: result.accountOutcome };
}

const CLAIM_OUTCOMES = {
  created: "claimed; you are the account's owner",
  linked: "linked to your organisation",
  reused: "existing account recognised",
} as const;

/**
 * The signed-in customer claims the acquisition with the single-use reference from the redirect
 * (spec 4.3 step 9). For a cloud account seen for the first time, the claimant chooses where the
 * subscription belongs: `organisation_id` names an organisation they own or administer (its API
 * passport is reused), and without it a new account organisation is made with them as its owner.
 * For a known cloud account, an existing member is recognised and nothing is added; anyone else is
 * refused. Retrying a claim that was used but not finished (same user) finishes it.
 */
export async function claimAcquisition(
  env: MarketplaceEnv,
  db: Database,
  subject: string,
  id: string,
  body: ClaimRequest,
): Promise<{ acquisition: AcquisitionRow; existingAccount: boolean }> {
  const now = new Date().toISOString();
  const row = await findAcquisition(db, id);
  if (!row) throw notFound();
  const hash = await claimHash(env, body.claim_reference);
  const account = await accountOf(db, row);
  const alreadyMember = account ? await membershipIn(db, subject, account.organisationId) : undefined;
  const unfinishedByYou = row.claimedBy === subject && !row.passportId;

  if (!claimUsable(row, hash, now) && !unfinishedByYou) {
    // Claiming twice with a used reference is fine for the one who used it.
    if (row.claimedBy === subject && alreadyMember) {
      return { acquisition: row, existingAccount: true };
    }
    throw new Refusal("claim-reference-invalid", {
      detail: "This claim reference is wrong, has expired or was already used. Open the link from your latest set-up.",
    });
  }
  if (row.status !== "completed") {
    const failed = row.status === "failed";
    throw new Refusal(
      "acquisition-not-ready",
      {
        detail: failed
          ? `Set-up failed at ${row.failedStage}: ${row.errorMessage}`
          : "Set-up is still running; claim again in a few seconds.",
        stage: row.failedStage ?? undefined,
      },
      failed ? {} : { retryAfterSeconds: 2 },
    );
  }
  if (account && !alreadyMember && (await hasMembers(db, account.organisationId))) {
    throw new Refusal("forbidden", {
      detail: "This marketplace account is already held by other users. Ask one of its owners to add you.",
    });
  }
  const existing = account ? undefined : await chosenOrganisation(shardsOf(env), db, subject, body.organisation_id);
  const settingUp = !account || !row.passportId;
  if (!settingUp && body.passport_id) {
    throw new Refusal("invalid-request", {
      detail: "This acquisition's passport is already set up; passport_id chooses one only at a first claim.",
    });
  }
  const family = row.family === "agent" ? "agent" : "api";
  const chosenPassport = settingUp
    ? await choosePassport(db, account?.organisationId ?? existing?.organisationId, family, body.passport_id)
    : undefined;
  if (!unfinishedByYou && !(await consumeClaim(db, row.id, hash, subject, now))) {
    throw new Refusal("claim-reference-invalid", { detail: "This claim reference was just used." });
  }
  let outcome: keyof typeof CLAIM_OUTCOMES = alreadyMember ? "reused" : "created";
  if (settingUp) {
    outcome = (await setUpForClaimant(env, db, row, subject, existing, chosenPassport)).accountOutcome;
  } else if (!alreadyMember && !(await becomeFirstOwner(db, account.organisationId, subject))) {
    throw new Refusal("forbidden", { detail: "Another user claimed this marketplace account first." });
  }
  await recordStage(db, row.id, "claim", { status: "succeeded", outcome: CLAIM_OUTCOMES[outcome], at: now });
  const claimed = await findAcquisition(db, row.id);
  if (!claimed) throw new Error("claimed acquisition vanished");
  return { acquisition: claimed, existingAccount: outcome !== "created" };
}
