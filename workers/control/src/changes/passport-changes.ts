import {
  allowedTransitions,
  canTransition,
  type Family,
  isReactivation,
  type LifecycleStatus,
  MAX_USES_LINKS,
  PRIMARY_BINDING_CLASS,
} from "@passport/domain";
import { requireRole } from "../access/membership.ts";
import type { ProvenHolder } from "../db/binding-index.ts";
import { type Database, randomId } from "../db/client.ts";
import { membershipIn, type Role } from "../db/organisations.ts";
import {
  authorityOf,
  bindingOf,
  bindingWithValue,
  currentEvidenceOf,
  deleteAuthority,
  deleteBinding,
  insertBinding,
  insertEvidence,
  rescheduleCheckedBindings,
  setAuthorityExpiry,
  unscheduleBindings,
  withdrawEvidence,
} from "../db/passport-entries.ts";
import {
  bindingAndPrimaryHolders,
  findPassport,
  type PassportChange,
  type PassportRow,
  primaryBindingHolders,
} from "../db/passports.ts";
import type { Shards } from "../db/shards.ts";
import { deleteUse, insertUse, useOf } from "../db/uses.ts";
import type { Attestation } from "../evidence/attestation.ts";
import { Refusal } from "../failures.ts";
import { claimPrimaryValues } from "./directory-entries.ts";
import {
  type AuthorityExpiryRequest,
  type BindingInput,
  bindingClassRefusal,
  type EvidenceInput,
  type StateChangeRequest,
  type UpdatePassportRequest,
} from "./requests.ts";

// The rules of each material change to a passport. Each function takes the passport as it is now
// and the validated input, and returns the change to commit (see `commitChange`) or throws the
// problem that refuses it. Routes validate and authorize; they decide nothing here.

/** Who claims primary binding values in the directory's cross-organisation index (docs/sharding.md). */
interface Claim {
  shards: Shards;
  identityId: string;
}

/**
 * Refuses a primary binding already held by another operative passport of the same family in the
 * organisation (spec 1.6): the primary binding is what says "this is the same object", so a second
 * passport for it would split its history. Other binding classes may be shared. `exceptId` lets a
 * passport re-check its own bindings. Across organisations only a verified holder refuses a claim
 * (docs/bindings.md); `distinct_object_reason` skips both checks. This check words the common
 * refusal; within an organisation the database holds the rule when two writes race (migration
 * 0007, `duplicateRaceRefusal`). Across organisations in other shards the directory's index holds
 * it: with `claim`, the values are claimed there, in one conditional statement each, once the
 * shard's own reads found no holder.
 */
export async function refuseDuplicates(
  db: Database,
  organisationId: string,
  family: Family,
  candidates: { class: string; value: string }[],
  options: { exceptId?: string; claim?: Claim } = {},
): Promise<void> {
  const { exceptId, claim } = options;
  const primary = PRIMARY_BINDING_CLASS[family];
  const values = candidates.filter((b) => b.class === primary).map((b) => b.value);
  if (values.length === 0) return;
  const { inOrganisation, elsewhere } = await primaryBindingHolders(
    db,
    organisationId,
    family,
    primary,
    values,
    new Date().toISOString(),
  );
  const refusal = duplicateRefusal(primary, { inOrganisation, elsewhere }, exceptId);
  if (refusal) throw refusal;
  if (!claim) return;
  const holder = await claimPrimaryValues(claim.shards, { ...claim, organisationId, family }, candidates);
  if (holder) throw provenElsewhereRefusal(primary, holder);
}

/** The refusal of a claim of a value another organisation has proven control of. */
function provenElsewhereRefusal(primary: string, holder: ProvenHolder & { value: string }): Refusal {
  return new Refusal("duplicate-identity", {
    detail: `Passport ${holder.identityId} of another organisation has proven control of ${primary} ${holder.value}. If you control it now, publish the proof there and ask that organisation to remove its binding, or wait for its proof to lapse.`,
    existing_identity_id: holder.identityId,
    verified_holder: { identity_id: holder.identityId, organisation_id: holder.organisationId },
  });
}

/** The refusal `refuseDuplicates` words for the holders of a primary binding value, if any holds it. */
function duplicateRefusal(
  primary: string,
  holders: {
    inOrganisation: { id: string; value: string }[];
    elsewhere: { id: string; organisationId: string; value: string }[];
  },
  exceptId?: string,
): Refusal | undefined {
  const [clash] = holders.inOrganisation.filter((p) => p.id !== exceptId);
  if (clash) {
    return new Refusal("duplicate-identity", {
      detail: `Passport ${clash.id} already identifies the object at ${primary} ${clash.value}. Update that passport, or declare a materially distinct object with distinct_object_reason.`,
      existing_identity_id: clash.id,
    });
  }
  // Across organisations only proof counts: a claim is refused once another organisation has
  // proven control of the value, and the refusal names that verified holder.
  const [holder] = holders.elsewhere;
  return holder ? provenElsewhereRefusal(primary, { ...holder, identityId: holder.id }) : undefined;
}

/**
 * Refuses a create that lists the same binding (class and value) twice: a passport holds each
 * binding once. A rule of the creation, not of the request's shape, so a batch item that repeats
 * one is refused alone while the other items commit.
 */
export function refuseRepeatedBindings(bindings: readonly { class: string; value: string }[]): void {
  const seen = new Map<string, number>();
  for (const [index, binding] of bindings.entries()) {
    const key = JSON.stringify([binding.class, binding.value]);
    const first = seen.get(key);
    if (first !== undefined) {
      const message = `repeats bindings.${first} (${binding.class} ${binding.value})`;
      throw new Refusal("invalid-request", {
        detail: `bindings.${index} ${message}; list each binding once.`,
        errors: [{ path: `bindings.${index}`, message }],
      });
    }
    seen.set(key, index);
  }
}

/**
 * The refusal for a write the database stopped because another operative passport holds the same
 * primary binding in the organisation the write targets: found again after the fact so the answer
 * can name it. `candidates` are the primary binding values the write would have held there.
 */
export async function duplicateRaceRefusal(
  db: Database,
  organisationId: string,
  family: Family,
  candidates: { class: string; value: string }[],
  exceptId?: string,
): Promise<Refusal> {
  try {
    await refuseDuplicates(db, organisationId, family, candidates, { exceptId });
  } catch (problem) {
    if (problem instanceof Refusal) return problem;
    throw problem;
  }
  return new Refusal("duplicate-identity", {
    detail: `Another passport of this organisation took the same ${PRIMARY_BINDING_CLASS[family]} at the same moment. Re-read and try again.`,
  });
}

/**
 * What a material change adds to start a re-evaluation (spec 3 "reactivation / change",
 * docs/lifecycle.md#what-starts-a-re-evaluation): the record carries `recheck_required` from `at`,
 * and every binding the service checked before is due for its check now (the binding-checks
 * scheduler and queue run them, never the request). The flag clears by itself once they passed and
 * the evidence was renewed. A change during a pending re-evaluation starts it again from `at`.
 */
function reevaluationFrom(db: Database, passportId: string, at: string) {
  return {
    set: { recheckRequired: true, recheckSince: at },
    statements: [rescheduleCheckedBindings(db, passportId, at)],
  };
}

/**
 * The organisation named as a separate operator, checked: another organisation than the passport's,
 * in which the caller is at least an editor (naming it publishes its name in the record). A
 * non-member gets the same answer as an unknown id, so the check reveals no organisation. It must
 * be in the passport's shard: the record is read with its operator in one batch and
 * `passports.operator_organisation_id` is a foreign key, which holds only inside one database.
 */
async function namedOperator(db: Database, shards: Shards, subject: string, passport: PassportRow, operatorId: string) {
  const refuse = (message: string) =>
    new Refusal("invalid-request", {
      detail: `${message.charAt(0).toUpperCase()}${message.slice(1)}.`,
      errors: [{ path: "operator_organisation_id", message }],
    });
  if (operatorId === passport.organisationId) {
    throw refuse("this is the passport's own organisation; a separate operator is another organisation");
  }
  const operatorShard = await shards.readOrganisation(operatorId);
  const membership = await membershipIn(operatorShard, subject, operatorId);
  if (!membership) throw refuse("no organisation you belong to has this id");
  requireRole(membership, "editor");
  if (operatorShard !== db) {
    throw new Refusal("crosses-shards", {
      detail: `Organisation ${operatorId} is stored in another shard than this passport's organisation, so it cannot be named as its operator. Move one of the two organisations to the other's shard first.`,
    });
  }
}

/**
 * A new display name, a stated relationship of the organisation to the object, and/or a separate
 * operator organisation (spec 2.1). A separate operator is stated only while the passport's
 * organisation is the responsible one: an organisation that itself only operates the object
 * leaves no one else to name.
 */
export async function displayUpdate(
  db: Database,
  shards: Shards,
  subject: string,
  passport: PassportRow,
  input: UpdatePassportRequest,
): Promise<PassportChange> {
  const operatorId = input.operator_organisation_id;
  const relationship = input.relationship ?? passport.relationship;
  const operatorAfter = operatorId !== undefined ? operatorId : passport.operatorOrganisationId;
  if (relationship === "operator" && operatorAfter) {
    throw new Refusal("invalid-request", {
      detail: "A separate operator is named only while this organisation is the responsible one.",
      errors: [{ path: "operator_organisation_id", message: "needs relationship responsible" }],
    });
  }
  if (operatorId) await namedOperator(db, shards, subject, passport, operatorId);
  // Who answers for the object, or who runs it, changed: a material change (docs/lifecycle.md).
  const material =
    (input.relationship !== undefined && input.relationship !== passport.relationship) ||
    (operatorId !== undefined && operatorId !== passport.operatorOrganisationId);
  const reevaluation = material ? reevaluationFrom(db, passport.id, new Date().toISOString()) : undefined;
  const detail = {
    ...(input.display_name !== undefined ? { display_name: input.display_name } : {}),
    ...(input.relationship ? { relationship: input.relationship } : {}),
    ...(operatorId !== undefined ? { operator_organisation_id: operatorId } : {}),
  };
  return {
    kind:
      input.display_name !== undefined
        ? "display.updated"
        : input.relationship
          ? "relationship.changed"
          : "operator.changed",
    detail,
    set: {
      ...(input.display_name !== undefined ? { displayName: input.display_name } : {}),
      ...(input.relationship ? { relationship: input.relationship } : {}),
      ...(operatorId !== undefined ? { operatorOrganisationId: operatorId } : {}),
      ...reevaluation?.set,
    },
    ...(reevaluation ? { statements: reevaluation.statements } : {}),
  };
}

export async function bindingAddition(
  db: Database,
  shards: Shards,
  passport: PassportRow,
  binding: BindingInput,
): Promise<PassportChange> {
  const refusal = bindingClassRefusal(passport.family, binding.class);
  if (refusal) {
    throw new Refusal("invalid-request", { detail: `${refusal}.`, errors: [{ path: "class", message: refusal }] });
  }
  // A passport declared a materially distinct object may share its primary binding (spec 1.6).
  const primary = PRIMARY_BINDING_CLASS[passport.family];
  const checksDuplicates = binding.class === primary && !passport.distinctReason;
  // One round trip: the binding the passport may have already and, for a primary binding, who
  // holds it. A binding the passport already has is the answer that wins.
  let existing: { id: string } | undefined;
  let duplicate: Refusal | undefined;
  if (checksDuplicates) {
    const reads = await bindingAndPrimaryHolders(db, {
      passportId: passport.id,
      organisationId: passport.organisationId,
      family: passport.family,
      binding,
      now: new Date().toISOString(),
    });
    existing = reads.existing;
    duplicate = duplicateRefusal(primary, reads, passport.id);
  } else {
    existing = await bindingWithValue(db, passport.id, binding);
  }
  if (existing) {
    throw new Refusal("binding-exists", {
      detail: "This passport already has that binding.",
      binding_id: existing.id,
    });
  }
  if (duplicate) throw duplicate;
  if (checksDuplicates) {
    const holder = await claimPrimaryValues(
      shards,
      { identityId: passport.id, organisationId: passport.organisationId, family: passport.family },
      [binding],
    );
    if (holder) throw provenElsewhereRefusal(primary, holder);
  }
  const id = crypto.randomUUID();
  return {
    kind: "binding.added",
    detail: { binding_id: id, class: binding.class, value: binding.value },
    statements: [insertBinding(db, { id, passportId: passport.id, ...binding, boundAt: new Date().toISOString() })],
  };
}

export async function bindingRemoval(db: Database, passport: PassportRow, bindingId: string): Promise<PassportChange> {
  const binding = await bindingOf(db, passport.id, bindingId);
  if (!binding) throw new Refusal("route-not-found", { detail: "This passport has no binding with that id." });
  return {
    kind: "binding.removed",
    detail: { binding_id: binding.id, class: binding.class, value: binding.value },
    // The observed evidence of its proof goes with it: it proved control of a value no longer bound.
    statements: [
      deleteBinding(db, binding.id),
      ...(binding.verificationEvidenceId
        ? [withdrawEvidence(db, binding.verificationEvidenceId, new Date().toISOString())]
        : []),
    ],
  };
}

/**
 * Evidence a member writes is asserted; it counts for required claims only when a trusted source
 * attested it (`attestation`, verified by `verifiedAttestation`), never because of its text.
 */
export function evidenceAddition(
  db: Database,
  passport: PassportRow,
  input: EvidenceInput,
  attestation: Attestation | undefined,
): PassportChange {
  const id = randomId("ev");
  return {
    kind: "evidence.added",
    detail: {
      evidence_id: id,
      claim: input.claim,
      source: input.source,
      basis: "asserted",
      trusted_source: attestation !== undefined,
      ...(attestation ? { attested_by: { source: input.source, key_id: attestation.keyId } } : {}),
    },
    statements: [
      insertEvidence(db, {
        id,
        passportId: passport.id,
        claim: input.claim,
        source: input.source,
        scope: input.scope,
        reference: input.reference,
        observedAt: new Date(input.observed_at).toISOString(),
        freshUntil: input.fresh_until ? new Date(input.fresh_until).toISOString() : undefined,
        basis: "asserted",
        trustedSource: attestation !== undefined,
        attestedKeyId: attestation?.keyId,
        attestation: attestation?.jws,
      }),
    ],
  };
}

export async function evidenceWithdrawal(
  db: Database,
  passport: PassportRow,
  evidenceId: string,
): Promise<PassportChange> {
  const item = await currentEvidenceOf(db, passport.id, evidenceId);
  if (!item) throw new Refusal("route-not-found", { detail: "This passport has no current evidence with that id." });
  return {
    kind: "evidence.withdrawn",
    detail: { evidence_id: item.id, claim: item.claim },
    statements: [withdrawEvidence(db, item.id, new Date().toISOString())],
  };
}

export async function authorityRemoval(
  db: Database,
  passport: PassportRow,
  authorityId: string,
): Promise<PassportChange> {
  const entry = await authorityOf(db, passport.id, authorityId);
  if (!entry) throw new Refusal("route-not-found", { detail: "This passport has no authority entry with that id." });
  return {
    kind: "authority.removed",
    detail: { authority_id: entry.id, action: entry.action },
    statements: [deleteAuthority(db, entry.id)],
  };
}

/**
 * Ends an authority entry at a time (now by default) while keeping it in the record, so consumers
 * see that the context existed and when it stopped applying. Expiry only moves earlier: extending
 * authority is a new grant, added as a new entry.
 */
export async function authorityExpiry(
  db: Database,
  passport: PassportRow,
  authorityId: string,
  input: AuthorityExpiryRequest,
): Promise<PassportChange> {
  const entry = await authorityOf(db, passport.id, authorityId);
  if (!entry) throw new Refusal("route-not-found", { detail: "This passport has no authority entry with that id." });
  const at = new Date(input.expires_at ?? Date.now()).toISOString();
  if (entry.expiresAt && Date.parse(entry.expiresAt) <= Date.parse(at)) {
    throw new Refusal("invalid-request", {
      detail: `This entry already expires at ${entry.expiresAt}. To extend authority, add a new entry.`,
      errors: [{ path: "expires_at", message: "must be earlier than the entry's current expiry" }],
    });
  }
  return {
    kind: "authority.expired",
    detail: { authority_id: entry.id, action: entry.action, expires_at: at },
    statements: [setAuthorityExpiry(db, entry.id, at)],
  };
}

/**
 * Who may create an API passport outside the marketplace (docs/api-passports.md): an API passport
 * is acquired through the marketplace (spec 1.5), so in the Dashboard only an owner or admin
 * creates one, for a materially distinct interface (spec 1.6) of an organisation they answer for.
 * Editors create agent passports and manage every passport they can see.
 */
export function refuseDirectApiPassport(family: Family, role: Role): void {
  if (family !== "api" || role === "owner" || role === "admin") return;
  throw new Refusal("forbidden", {
    detail:
      "API passports are acquired through the marketplace. Outside it, only an owner or admin of the organisation creates one, for a materially distinct interface (docs/api-passports.md).",
  });
}

/** Lifecycle decides whether the passport may be relied on at all, so only admins change it (docs/roles.md). */
export function roleForStateChange(input: StateChangeRequest): Role {
  return input.lifecycle !== undefined ? "admin" : "editor";
}

/**
 * The refusal of a lifecycle change the state machine does not allow, naming the current status and
 * the allowed ones. Asking for the current status again is refused too (docs/lifecycle.md): it would
 * publish a new version and a history event that change nothing.
 */
function transitionRefusal(from: LifecycleStatus, to: LifecycleStatus): Refusal {
  const allowed = allowedTransitions(from);
  const detail =
    from === to ? `The passport is already ${from}; nothing was changed.` : `A ${from} passport cannot become ${to}.`;
  return new Refusal("invalid-transition", {
    detail: `${detail} Allowed: ${allowed.join(", ") || "none"}.`,
    current: from,
    allowed,
  });
}

/**
 * A state change. The lifecycle moves only along the state machine in @passport/domain.
 * Reactivating a suspended passport starts a re-evaluation (docs/lifecycle.md#re-evaluation): the
 * record carries `recheck_required` from then on, every binding the service checked before is due
 * for its check now (the binding-checks scheduler and queue run them, never this request), and the
 * flag clears by itself, as a change of its own, once they passed and the evidence was renewed.
 * Nobody clears it by saying so: `recheck_completed` is refused with `recheck-pending`.
 */
export function stateChange(db: Database, passport: PassportRow, input: StateChangeRequest): PassportChange {
  if (input.recheck_completed) {
    throw new Refusal("recheck-pending", {
      detail: passport.recheckRequired
        ? "The re-check flag clears by itself once every binding checked before the reactivation passed a new check and the evidence was renewed. See GET /v1/passports/{id}/recheck for what it waits for; POST to it asks for the checks now."
        : "This passport awaits no re-check. The re-check flag clears by itself once the checks pass; it is never confirmed by hand.",
      recheck_url: `/v1/passports/${passport.id}/recheck`,
    });
  }
  if (input.model !== undefined && passport.family !== "agent") {
    throw new Refusal("invalid-request", {
      detail: "Only agent passports state the model they run.",
      errors: [{ path: "model", message: "only agent passports state a model" }],
    });
  }
  const to = input.lifecycle;
  if (to && !canTransition(passport.lifecycle, to)) throw transitionRefusal(passport.lifecycle, to);
  const reactivated = to !== undefined && isReactivation(passport.lifecycle, to);
  const at = new Date().toISOString();
  const reevaluation = reactivated ? reevaluationFrom(db, passport.id, at) : undefined;
  const set = {
    ...(to ? { lifecycle: to } : {}),
    ...(input.availability !== undefined ? { availability: input.availability } : {}),
    ...(input.environment !== undefined ? { environment: input.environment } : {}),
    ...(input.version !== undefined ? { version: input.version } : {}),
    // Context around the same identity (spec 1.1, 1.6): a new record version, never a new id.
    ...(input.model !== undefined
      ? {
          modelProvider: input.model?.provider ?? null,
          modelName: input.model?.name ?? null,
          modelVersion: input.model?.version ?? null,
        }
      : {}),
    ...reevaluation?.set,
    stateAsOf: at,
  };
  return {
    kind: reactivated ? "state.reactivated" : to !== undefined ? "state.lifecycle_changed" : "state.changed",
    detail: {
      ...(to ? { lifecycle: { from: passport.lifecycle, to } } : {}),
      ...(input.availability !== undefined ? { availability: input.availability } : {}),
      ...(input.environment !== undefined ? { environment: input.environment } : {}),
      ...(input.version !== undefined ? { version: input.version } : {}),
      ...(input.model !== undefined ? { model: input.model } : {}),
      ...(reactivated ? { recheck_required: true } : {}),
      ...(input.reason ? { reason: input.reason } : {}),
    },
    set,
    ...(reevaluation ? { statements: reevaluation.statements } : {}),
    ...(to === "retired" ? { statements: [unscheduleBindings(db, passport.id)] } : {}),
  };
}

/**
 * Marks `duplicate` a duplicate of `survivor` and retires it (spec 1.6). The survivor must be an
 * operative passport of the same family and not itself a duplicate, so duplicate chains never form
 * and a verifier following `duplicate_of` always lands on a passport it can use.
 */
export function duplicateRetirement(
  db: Database,
  duplicate: PassportRow,
  survivor: PassportRow,
  reason: string,
): PassportChange {
  if (survivor.family !== duplicate.family || survivor.lifecycle === "retired" || survivor.duplicateOf) {
    throw new Refusal("invalid-request", {
      detail: "The surviving passport must be an operative passport of the same family.",
    });
  }
  return {
    kind: "duplicate.retired",
    detail: { survivor_id: survivor.id, reason, lifecycle: { from: duplicate.lifecycle, to: "retired" } },
    set: { lifecycle: "retired", duplicateOf: survivor.id, stateAsOf: new Date().toISOString() },
    statements: [unscheduleBindings(db, duplicate.id)],
  };
}

/**
 * Moves responsibility for the passport; its identity id and history stay the same. A material
 * change: the organisation that answers for the object is another, so the record is re-evaluated
 * before it is relied on (docs/lifecycle.md#what-starts-a-re-evaluation).
 */
export function transfer(db: Database, passport: PassportRow, organisationId: string, reason: string): PassportChange {
  if (passport.organisationId === organisationId) {
    throw new Refusal("invalid-request", { detail: "The passport already belongs to that organisation." });
  }
  const reevaluation = reevaluationFrom(db, passport.id, new Date().toISOString());
  return {
    kind: "responsibility.changed",
    detail: { from: passport.organisationId, to: organisationId, reason },
    set: { organisationId, ...reevaluation.set },
    statements: reevaluation.statements,
  };
}

/**
 * An agent declares it calls the API (or MCP) passport `targetId` (docs/reciprocal-trust.md). Only
 * agent passports declare links; the target is any other passport of the service, of any
 * organisation and so of any shard (read through its own: `passport_uses.target_id` has no foreign
 * key, docs/sharding.md), since its record is public. The change is the agent's own next version: nothing
 * of the target changes, so declaring a link to someone else's passport never republishes it, and a
 * link grants nothing. At most MAX_USES_LINKS per agent (held by migration 0020's trigger).
 */
export async function usesAddition(
  db: Database,
  shards: Shards,
  passport: PassportRow,
  targetId: string,
): Promise<PassportChange> {
  if (passport.family !== "agent") {
    throw new Refusal("invalid-request", {
      detail: "Only agent passports declare the passports they use.",
      errors: [{ path: "identity_id", message: "only agent passports declare uses links" }],
    });
  }
  if (targetId === passport.id) {
    throw new Refusal("invalid-request", {
      detail: "A passport does not declare that it uses itself.",
      errors: [{ path: "identity_id", message: "is this passport's own id" }],
    });
  }
  const [target, link] = await Promise.all([
    shards.readIdentity(targetId).then((targetShard) => findPassport(targetShard, targetId)),
    useOf(db, passport.id, targetId),
  ]);
  if (!target) throw new Refusal("identity-not-found", { detail: `No passport has the id ${targetId}.` });
  if (link) {
    throw new Refusal("link-exists", { detail: `This passport already declares that it uses ${targetId}.` });
  }
  // The limit per agent (MAX_USES_LINKS) is migration 0020's trigger: commitChange answers its
  // refusal with usesLimitRefusal, so it holds however many writers race.
  const declaredAt = new Date().toISOString();
  return {
    kind: "uses.declared",
    detail: { identity_id: targetId, family: target.family },
    statements: [insertUse(db, { agentId: passport.id, targetId, targetFamily: target.family, declaredAt })],
  };
}

/** The refusal of a link past the limit per agent. */
export function usesLimitRefusal(): Refusal {
  return new Refusal("invalid-request", {
    detail: `An agent passport declares at most ${MAX_USES_LINKS} passports it uses; remove one first.`,
    errors: [{ path: "identity_id", message: `at most ${MAX_USES_LINKS} uses links per agent passport` }],
  });
}

/** An agent withdraws a uses link it declared. */
export async function usesRemoval(db: Database, passport: PassportRow, targetId: string): Promise<PassportChange> {
  const link = await useOf(db, passport.id, targetId);
  if (!link) throw new Refusal("route-not-found", { detail: "This passport declares no link to that id." });
  return {
    kind: "uses.removed",
    detail: { identity_id: targetId },
    statements: [deleteUse(db, passport.id, targetId)],
  };
}
