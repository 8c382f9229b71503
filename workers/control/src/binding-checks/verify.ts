import { SERVICE_EVIDENCE_SOURCE } from "@passport/domain";
import { type Database, isConstraintError, randomId, UNIQUE_VIOLATION } from "../db/client.ts";
import { insertEvidence, withdrawEvidence } from "../db/passport-entries.ts";
import { commitChangeStatements, findPassport, type PassportChange, type PassportRow } from "../db/passports.ts";
import { shardsOf } from "../db/shards.ts";
import { Refusal } from "../failures.ts";
import { outboundFor } from "../outbound/config.ts";
import { publishOrDefer } from "../publication/index.ts";
import { type CheckResult, type CheckTarget, checkBinding, PROOF_LIFETIME_MS } from "./checks.ts";
import { followProof } from "./proof-index.ts";
import {
  activeMarketplaceLicenses,
  type BindingRow,
  commitCheck,
  ensureChallenge,
  holdRenewal,
  lapsedStatement,
  noteCheck,
  otherVerifiedHolders,
  provenSigningKeys,
  renewalCompanions,
  retryLater,
  scheduledCheckOf,
  unschedule,
  verifiedStatement,
} from "./queries.ts";
import { settleReevaluation } from "./reevaluation.ts";
import {
  type Decision,
  decide,
  type CheckOutcome as LoggedOutcome,
  type Observation,
  renewalCheckAt,
  renewalMustPublish,
  renewalWindow,
} from "./schedule.ts";
import { currentKeys, keysAfterCheck } from "./signing-keys.ts";

/** The source every observed evidence item names: the service's own check (reserved: tenants cannot use it). */
const SERVICE_SOURCE = SERVICE_EVIDENCE_SOURCE;

export interface CheckOutcome {
  result: "verified" | "not_proven";
  reason: string | null;
  target: CheckTarget;
}

function resolverUrl(env: Env, identityId: string): string {
  return `${env.RESOLVER_BASE_URL.replace(/\/$/, "")}/p/${identityId}`;
}

/**
 * The binding's challenge for its first proof: a random public token (not a secret), made once by a
 * single conditional update so two concurrent first checks agree on it. Once a binding has been
 * verified, re-checks need only the identity id.
 */
async function challengeFor(db: Database, binding: BindingRow): Promise<string | undefined> {
  if (binding.verifiedAt) return undefined;
  if (binding.challenge) return binding.challenge;
  return ensureChallenge(db, binding.id);
}

async function checkTarget(env: Env, db: Database, passport: PassportRow, binding: BindingRow) {
  return {
    identityId: passport.id,
    resolverUrl: resolverUrl(env, passport.id),
    class: binding.class as CheckTarget["class"],
    value: binding.value,
    challenge: await challengeFor(db, binding),
    ...(binding.class === "manifest"
      ? { provenKeys: await provenSigningKeys(db, passport.id, new Date().toISOString()) }
      : {}),
  } satisfies CheckTarget;
}

/**
 * A gateway or provider id is proven only by the provider's own statement. The one provider the
 * service hears from is AWS Marketplace: for a passport its acquisition created (or adopted), the
 * marketplace confirmed the license and product, so a gateway binding naming that license ARN or
 * `aws-marketplace:{product code}` of an active entitlement is proven. Anything else stays claimed.
 */
async function providerStatement(db: Database, passport: PassportRow, binding: BindingRow): Promise<CheckResult> {
  const licenses = await activeMarketplaceLicenses(db, passport.id);
  const match = licenses.find(
    (l) => binding.value === l.licenseArn || (l.productCode && binding.value === `aws-marketplace:${l.productCode}`),
  );
  if (!match) {
    return {
      ok: false,
      reason:
        licenses.length === 0
          ? "no provider statement: this passport did not come from a marketplace acquisition with an active entitlement"
          : "the marketplace acquisition names another license or product",
    };
  }
  return {
    ok: true,
    method: "provider_statement",
    scope: `AWS Marketplace entitlement ${match.licenseArn ?? `product ${match.productCode}`}`,
    claim: "binding.gateway_control",
  };
}

/** The change that records a successful check: observed evidence, the binding verified and due again before its proof ends. */
function verifiedChange(
  db: Database,
  passport: PassportRow,
  binding: BindingRow,
  proof: CheckResult & { ok: true },
  now: Date,
  random: number,
  keepClaim = false,
): PassportChange {
  const at = now.toISOString();
  const freshUntil = new Date(now.getTime() + PROOF_LIFETIME_MS).toISOString();
  const evidenceId = randomId("ev");
  return {
    kind: "binding.verified",
    detail: {
      binding_id: binding.id,
      class: binding.class,
      value: binding.value,
      method: proof.method,
      scope: proof.scope,
      // The keys seen, so the history shows each rotation (docs/reciprocal-trust.md).
      ...(proof.keys ? { keys: proof.keys.map((k) => k.thumbprint) } : {}),
    },
    statements: [
      insertEvidence(db, {
        id: evidenceId,
        passportId: passport.id,
        claim: proof.claim,
        source: SERVICE_SOURCE,
        scope: proof.scope,
        observedAt: at,
        freshUntil,
        basis: "observed",
      }),
      ...(binding.verificationEvidenceId ? [withdrawEvidence(db, binding.verificationEvidenceId, at)] : []),
      verifiedStatement(db, binding.id, {
        method: proof.method,
        evidenceId,
        at,
        freshUntil,
        nextCheckAt: renewalCheckAt(freshUntil, random),
        // A directory's keys follow rotation; a manifest's signers are what this check saw.
        ...(proof.keys
          ? {
              keys:
                binding.class === "signing_keys" ? keysAfterCheck(binding.observedKeys, proof.keys, at) : proof.keys,
            }
          : {}),
        keepClaim,
      }),
    ],
  };
}

/**
 * Passports of other organisations, in every shard, that hold the binding's value verified: a rival
 * may be kept in any shard (docs/sharding.md), each with the handle of its own shard.
 */
async function rivalHolders(env: Env, organisationId: string, binding: BindingRow) {
  const found = await Promise.all(
    shardsOf(env)
      .everyShard()
      .map(async (db) => (await otherVerifiedHolders(db, organisationId, binding)).map((rival) => ({ ...rival, db }))),
  );
  return found.flat();
}

/** Writes the conflict into the other holder's history too (its record is republished with it). */
async function recordConflict(env: Env, db: Database, rival: { id: string }, binding: BindingRow, claimant: string) {
  const current = await findPassport(db, rival.id);
  if (!current) return;
  const change: PassportChange = {
    kind: "binding.conflict",
    detail: { class: binding.class, value: binding.value, also_proven_by: claimant },
  };
  try {
    await commitCheck(db, commitChangeStatements(db, current, change, SERVICE_SOURCE, new Date().toISOString()));
    await publishOrDefer(env, rival.id);
  } catch (error) {
    console.error(
      JSON.stringify({
        level: "error",
        event: "binding_conflict_not_recorded",
        identity_id: rival.id,
        message: String(error),
      }),
    );
  }
}

/** The change that lapses a verified binding whose proof was contradicted or ran out. */
function lapsedChange(
  db: Database,
  binding: BindingRow,
  lapse: Decision & { action: "lapse" },
  now: Date,
): PassportChange {
  const at = now.toISOString();
  return {
    kind: "binding.lapsed",
    detail: { binding_id: binding.id, class: binding.class, value: binding.value, reason: lapse.reason },
    statements: [
      ...(binding.verificationEvidenceId ? [withdrawEvidence(db, binding.verificationEvidenceId, at)] : []),
      lapsedStatement(db, binding.id, { ...lapse, at }),
    ],
  };
}

/** True when a batch failed because another change took the passport's next version (the events index). */
function isVersionConflict(error: unknown): boolean {
  return isConstraintError(error, UNIQUE_VIOLATION);
}

/**
 * Commits a check's change; if another change took the passport's next version meanwhile (the
 * events index refuses the second), the caller is told to try again instead of a server error.
 */
async function commitOrRefuse(db: Database, statements: ReturnType<typeof commitChangeStatements>) {
  try {
    await commitCheck(db, statements);
  } catch (error) {
    if (!isVersionConflict(error)) throw error;
    throw new Refusal("precondition-failed", {
      detail: "The passport changed while the binding was being checked; check it again.",
    });
  }
}

/** What the check found, as the re-check rules see it (docs/bindings.md, "Re-checks"). */
function observation(result: CheckResult): Observation {
  if (result.ok) return { kind: "proven" };
  return { kind: result.unreachable ? "unreachable" : "mismatch", reason: result.reason };
}

/** Runs the check itself: the provider's statement for a gateway, otherwise a fetch of the bound host. */
async function observe(env: Env, db: Database, passport: PassportRow, binding: BindingRow) {
  const target = await checkTarget(env, db, passport, binding);
  const { transport, policy } = outboundFor(env);
  const result =
    binding.class === "gateway"
      ? await providerStatement(db, passport, binding)
      : await checkBinding({ transport, policy, dohUrl: env.BINDING_DOH_URL }, target);
  return { target, result };
}

/** The same public keys, in the same order (a signing_keys directory's keys, with their kid and alg). */
function sameKeys(published: BindingRow["observedKeys"], observed: (CheckResult & { ok: true })["keys"]): boolean {
  return JSON.stringify(currentKeys(published)) === JSON.stringify(observed ?? []);
}

/**
 * Holds a renewal in D1 when the record can stay as it is (docs/bindings.md, "Renewals"): the
 * binding is verified by the same method (and, for a key directory, the same keys), its published
 * proof is not yet due for renewal, and no re-evaluation waits for it. Returns whether it did.
 */
async function heldRenewal(
  db: Database,
  binding: BindingRow,
  proof: CheckResult & { ok: true },
  now: Date,
  random: number,
  claim: string | undefined,
): Promise<boolean> {
  const freshUntil = binding.verificationFreshUntil;
  if (
    binding.verificationState !== "verified" ||
    binding.verificationMethod !== proof.method ||
    !freshUntil ||
    renewalMustPublish(freshUntil, now) ||
    !sameKeys(binding.observedKeys, proof.keys)
  ) {
    return false;
  }
  return holdRenewal(db, binding.id, {
    at: now.toISOString(),
    method: proof.method,
    freshUntil,
    nextCheckAt: renewalCheckAt(freshUntil, random),
    window: renewalWindow(freshUntil),
    ...(claim === undefined ? {} : { claim }),
  });
}

/** Companions checked with a renewal at most: each is one more fetch, run at once with the others. */
const MAX_COMPANIONS = 10;

/**
 * Checks the passport's other verified bindings that the same scheduler claim took
 * (`renewalCompanions`) and returns those whose proof holds by the same method and keys, to be
 * renewed in the same version. The others are not decided here: each one's own claimed check runs
 * as it would have, by the usual rules.
 */
async function companionProofs(env: Env, db: Database, passport: PassportRow, binding: BindingRow, claim: string) {
  const others = await renewalCompanions(db, passport.id, binding.id, claim, MAX_COMPANIONS);
  const checked = await Promise.all(
    others.map(async (other) => {
      try {
        const { result } = await observe(env, db, passport, other);
        const renews =
          result.ok && result.method === other.verificationMethod && sameKeys(other.observedKeys, result.keys);
        return renews ? [{ binding: other, proof: result }] : [];
      } catch {
        return [];
      }
    }),
  );
  return checked.flat();
}

/**
 * Records a successful check: held in D1 when nothing a consumer relies on would change
 * (`heldRenewal`), otherwise committed as the passport's next version and published, with the
 * conflicts a proof revealed recorded. `claim` is the scheduler's, for a scheduled check.
 */
async function commitVerified(
  env: Env,
  db: Database,
  passport: PassportRow,
  binding: BindingRow,
  proof: CheckResult & { ok: true },
  actor: string,
  now: Date,
  commit: (statements: ReturnType<typeof commitChangeStatements>) => Promise<void>,
  claim?: string,
) {
  if (!passport.recheckSince && (await heldRenewal(db, binding, proof, now, Math.random(), claim))) return;
  // Another organisation proving control of the same value is a genuine conflict (docs/bindings.md),
  // recorded in both histories.
  const rivals = await rivalHolders(env, passport.organisationId, binding);
  const random = Math.random();
  const change = verifiedChange(db, passport, binding, proof, now, random);
  if (rivals.length > 0) change.detail.conflicts_with = rivals.map((r) => r.id);
  // A scheduled renewal takes along the passport's other renewals claimed in the same run: one
  // version, and one renewal time for all of them from then on (the same `random`).
  if (claim !== undefined && binding.verificationState === "verified") {
    const companions = await companionProofs(env, db, passport, binding, claim);
    for (const companion of companions) {
      change.statements?.push(
        ...(verifiedChange(db, passport, companion.binding, companion.proof, now, random, true).statements ?? []),
      );
    }
    if (companions.length > 0) {
      change.detail.also_renewed = companions.map(({ binding: b }) => ({
        binding_id: b.id,
        class: b.class,
        value: b.value,
      }));
    }
  }
  await commit(commitChangeStatements(db, passport, change, actor, now.toISOString()));
  // The proof's end as verifiedChange wrote it, for this binding and each companion renewed with it.
  const freshUntil = new Date(now.getTime() + PROOF_LIFETIME_MS).toISOString();
  await followProof(env, passport, binding, freshUntil);
  for (const companion of companionsOf(change)) {
    await followProof(env, passport, companion, freshUntil);
  }
  await publishOrDefer(env, passport.id);
  for (const rival of rivals) await recordConflict(env, rival.db, rival, binding, passport.id);
  // A passing check may be the last one a re-evaluation waited for (docs/lifecycle.md#re-evaluation).
  if (passport.recheckSince) await settleAfterCheck(env, db, passport.id, now);
}

/** The bindings a verified change renewed along with its own (`also_renewed`). */
function companionsOf(change: PassportChange): { class: string; value: string }[] {
  return (change.detail.also_renewed as { class: string; value: string }[] | undefined) ?? [];
}

/** Settles a re-evaluation after a check; a failure here never undoes the check (the scheduler tries again). */
async function settleAfterCheck(env: Env, db: Database, passportId: string, now: Date) {
  try {
    await settleReevaluation(env, db, passportId, now);
  } catch (error) {
    console.error(
      JSON.stringify({
        level: "error",
        event: "reevaluation_not_settled",
        identity_id: passportId,
        message: String(error),
      }),
    );
  }
}

/**
 * Checks one binding now, for a member, and records the outcome by the re-check rules: a success
 * verifies it (a new record version with observed evidence, or a held renewal when the record
 * already states the proof truthfully); an answer that contradicts a verified
 * binding's proof lapses it; no answer (unreachable) keeps a fresh proof. Otherwise only the check
 * is noted (nothing published changes). Publishes when the record changed.
 */
export async function runBindingCheck(
  env: Env,
  db: Database,
  passport: PassportRow,
  binding: BindingRow,
  actor: string,
): Promise<CheckOutcome> {
  const { target, result } = await observe(env, db, passport, binding);
  const now = new Date();
  if (result.ok) {
    await commitVerified(env, db, passport, binding, result, actor, now, (s) => commitOrRefuse(db, s));
    return { result: "verified", reason: null, target };
  }
  const decision = decide(
    { state: binding.verificationState, freshUntil: binding.verificationFreshUntil, failures: binding.checkFailures },
    observation(result),
    now,
    Math.random(),
  );
  if (decision.action === "lapse") {
    await commitOrRefuse(
      db,
      commitChangeStatements(db, passport, lapsedChange(db, binding, decision, now), actor, now.toISOString()),
    );
    await followProof(env, passport, binding, null);
    await publishOrDefer(env, passport.id);
  } else {
    await noteCheck(db, binding.id, {
      at: now.toISOString(),
      outcome: result.unreachable ? "unreachable" : "mismatch",
      reason: result.reason,
    });
  }
  return { result: "not_proven", reason: result.reason, target };
}

/** One scheduled check, as its queue message names it. */
export interface ScheduledCheck {
  binding_id: string;
  passport_id: string;
  claim: string;
}

/** What a scheduled check did; `skipped` when its claim was no longer the binding's (or nothing was left to check). */
export type ScheduledResult = LoggedOutcome | "skipped";

/** Commits once the passport's next version is still free; a concurrent change makes it re-read and try again. */
const COMMIT_ATTEMPTS = 3;

/**
 * Runs one scheduled check under its claim and records the outcome by the re-check rules
 * (schedule.ts). A change to the passport while the check runs is met by re-reading it and
 * committing again; a check that still fails, or throws, is recorded as `error` and retried with
 * backoff, so it never holds its place in the schedule.
 */
export async function runScheduledCheck(
  env: Env,
  db: Database,
  message: ScheduledCheck,
  now = new Date(),
  random = Math.random(),
): Promise<ScheduledResult> {
  const row = await scheduledCheckOf(db, message.binding_id);
  if (!row || row.binding.checkClaim !== message.claim) return "skipped";
  if (row.passport.lifecycle === "retired" || row.binding.verificationState === "claimed") {
    await unschedule(db, row.binding.id, message.claim);
    return "skipped";
  }
  const schedule = (binding: BindingRow) => ({
    state: binding.verificationState,
    freshUntil: binding.verificationFreshUntil,
    failures: binding.checkFailures,
  });
  let decision: Decision;
  try {
    const { result } = await observe(env, db, row.passport, row.binding);
    decision = decide(schedule(row.binding), observation(result), now, random);
    // A retry changes nothing published: only the schedule and the log, under the claim (below).
    if (decision.action !== "retry") {
      for (let attempt = 1; ; attempt++) {
        const current = attempt === 1 ? row : await scheduledCheckOf(db, message.binding_id);
        if (!current || current.binding.checkClaim !== message.claim) return "skipped";
        try {
          if (decision.action === "verify" && result.ok) {
            await commitVerified(
              env,
              db,
              current.passport,
              current.binding,
              result,
              SERVICE_SOURCE,
              now,
              (s) => commitCheck(db, s),
              message.claim,
            );
          } else if (decision.action === "lapse") {
            const change = lapsedChange(db, current.binding, decision, now);
            await commitCheck(
              db,
              commitChangeStatements(db, current.passport, change, SERVICE_SOURCE, now.toISOString()),
            );
            await followProof(env, current.passport, current.binding, null);
            await publishOrDefer(env, current.passport.id);
          }
          return decision.outcome;
        } catch (error) {
          if (!isVersionConflict(error) || attempt >= COMMIT_ATTEMPTS) throw error;
        }
      }
    }
  } catch (error) {
    decision = decide(schedule(row.binding), { kind: "error", reason: checkError(error) }, now, random);
    if (decision.action !== "retry") throw error;
  }
  const recorded = await retryLater(db, row.binding.id, message.claim, {
    at: now.toISOString(),
    outcome: decision.outcome,
    reason: decision.reason,
    nextCheckAt: decision.nextCheckAt,
    failures: decision.failures,
  });
  return recorded ? decision.outcome : "skipped";
}

/** A check's failure as the binding's log shows it: what went wrong, never a stack or a secret. */
function checkError(error: unknown): string {
  if (isVersionConflict(error)) return "the passport kept changing while the binding was being checked";
  return `the check failed (${error instanceof Error ? error.name : "error"}); it is tried again later`;
}
