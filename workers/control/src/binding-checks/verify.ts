import { HttpProblem } from "../api/problem.ts";
import { type Database, randomId } from "../db/client.ts";
import { insertEvidence, withdrawEvidence } from "../db/passport-entries.ts";
import { commitChangeStatements, findPassport, type PassportChange, type PassportRow } from "../db/passports.ts";
import { outboundFor } from "../outbound/config.ts";
import { publishOrDefer } from "../publication/index.ts";
import { type CheckResult, type CheckTarget, checkBinding, PROOF_LIFETIME_MS } from "./checks.ts";
import {
  activeMarketplaceLicenses,
  type BindingRow,
  commitCheck,
  ensureChallenge,
  lapsedStatement,
  noteCheck,
  otherVerifiedHolders,
  verifiedStatement,
} from "./queries.ts";

/** The source every observed evidence item names: the service's own check. */
export const SERVICE_SOURCE = "passport-service";

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

/** The change that records a successful check: observed evidence, the binding verified. */
function verifiedChange(
  db: Database,
  passport: PassportRow,
  binding: BindingRow,
  proof: CheckResult & { ok: true },
): PassportChange {
  const now = new Date();
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
      verifiedStatement(db, binding.id, { method: proof.method, evidenceId, at, freshUntil }),
    ],
  };
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

/** The change that lapses a verified binding whose re-check failed or whose proof ran out. */
function lapsedChange(db: Database, binding: BindingRow, reason: string): PassportChange {
  const at = new Date().toISOString();
  return {
    kind: "binding.lapsed",
    detail: { binding_id: binding.id, class: binding.class, value: binding.value, reason },
    statements: [
      ...(binding.verificationEvidenceId ? [withdrawEvidence(db, binding.verificationEvidenceId, at)] : []),
      lapsedStatement(db, binding.id, reason, at),
    ],
  };
}

/**
 * Commits a check's change; if another change took the passport's next version meanwhile (the
 * events index refuses the second), the caller is told to try again instead of a server error.
 */
async function commitOrRefuse(db: Database, statements: ReturnType<typeof commitChangeStatements>) {
  try {
    await commitCheck(db, statements);
  } catch (error) {
    if (!String((error as { cause?: unknown })?.cause ?? error).includes("UNIQUE constraint failed")) throw error;
    throw new HttpProblem("precondition-failed", {
      detail: "The passport changed while the binding was being checked; check it again.",
    });
  }
}

/**
 * Checks one binding now and records the outcome: a success verifies it (a new record version with
 * observed evidence); a failure lapses a binding that was verified, and otherwise only notes the
 * last check (nothing published changes). Publishes when the record changed.
 */
export async function runBindingCheck(
  env: Env,
  db: Database,
  passport: PassportRow,
  binding: BindingRow,
  actor: string,
): Promise<CheckOutcome> {
  const target = await checkTarget(env, db, passport, binding);
  const { transport, policy } = outboundFor(env);
  const result =
    binding.class === "gateway"
      ? await providerStatement(db, passport, binding)
      : await checkBinding({ transport, policy, dohUrl: env.BINDING_DOH_URL }, target);
  const at = new Date().toISOString();
  if (result.ok) {
    // Another organisation proving control of the same value is a genuine conflict (docs/bindings.md),
    // recorded in both histories.
    const rivals = await otherVerifiedHolders(db, passport.organisationId, binding);
    const change = verifiedChange(db, passport, binding, result);
    if (rivals.length > 0) change.detail.conflicts_with = rivals.map((r) => r.id);
    await commitOrRefuse(db, commitChangeStatements(db, passport, change, actor, at));
    await publishOrDefer(env, passport.id);
    for (const rival of rivals) await recordConflict(env, db, rival, binding, passport.id);
    return { result: "verified", reason: null, target };
  }
  if (binding.verificationState === "verified") {
    await commitOrRefuse(db, commitChangeStatements(db, passport, lapsedChange(db, binding, result.reason), actor, at));
    await publishOrDefer(env, passport.id);
  } else {
    await noteCheck(db, binding.id, at, result.reason);
  }
  return { result: "not_proven", reason: result.reason, target };
}
