import { and, eq, isNull, ne } from "drizzle-orm";
import { HttpProblem } from "../api/problem.ts";
import { marketplaceAccountPassports, marketplaceCustomers } from "../db/acquisitions-schema.ts";
import type { Database } from "../db/client.ts";
import { randomId } from "../db/client.ts";
import { insertEvidence, withdrawEvidence } from "../db/passport-entries.ts";
import { commitChangeStatements, type PassportChange, type PassportRow } from "../db/passports.ts";
import { bindings, passports } from "../db/schema.ts";
import { outboundFor } from "../outbound/config.ts";
import { publishOrDefer } from "../publication/publish.ts";
import { type CheckResult, type CheckTarget, checkBinding, PROOF_LIFETIME_MS } from "./checks.ts";

/** The source every observed evidence item names: the service's own check. */
export const SERVICE_SOURCE = "passport-service";

type BindingRow = typeof bindings.$inferSelect;

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
  await db
    .update(bindings)
    .set({ challenge: randomId("chl") })
    .where(and(eq(bindings.id, binding.id), isNull(bindings.challenge)));
  const [row] = await db.select({ challenge: bindings.challenge }).from(bindings).where(eq(bindings.id, binding.id));
  return row?.challenge ?? undefined;
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
  const licenses = await db
    .select({ licenseArn: marketplaceCustomers.licenseArn, productCode: marketplaceCustomers.productCode })
    .from(marketplaceAccountPassports)
    .innerJoin(
      marketplaceCustomers,
      eq(marketplaceCustomers.marketplaceAccountId, marketplaceAccountPassports.marketplaceAccountId),
    )
    .where(and(eq(marketplaceAccountPassports.passportId, passport.id), eq(marketplaceCustomers.status, "active")));
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
      db
        .update(bindings)
        .set({
          verificationState: "verified",
          verificationMethod: proof.method,
          verifiedAt: at,
          verificationFreshUntil: freshUntil,
          verificationEvidenceId: evidenceId,
          lapsedAt: null,
          lapseReason: null,
          lastCheckedAt: at,
          lastCheckResult: `verified by ${proof.method}`,
        })
        .where(eq(bindings.id, binding.id)),
    ],
  };
}

/**
 * Passports of other organisations that also hold this binding verified: when both prove control
 * of the same value, that is a genuine conflict (docs/bindings.md), recorded in both histories.
 */
async function otherVerifiedHolders(db: Database, passport: PassportRow, binding: BindingRow) {
  return db
    .select({ id: passports.id, organisationId: passports.organisationId })
    .from(bindings)
    .innerJoin(passports, eq(bindings.passportId, passports.id))
    .where(
      and(
        eq(bindings.class, binding.class),
        eq(bindings.value, binding.value),
        eq(bindings.verificationState, "verified"),
        ne(passports.organisationId, passport.organisationId),
        ne(passports.lifecycle, "retired"),
      ),
    );
}

/** Writes the conflict into the other holder's history too (its record is republished with it). */
async function recordConflict(env: Env, db: Database, rival: { id: string }, binding: BindingRow, claimant: string) {
  const current = await db.query.passports.findFirst({ where: eq(passports.id, rival.id) });
  if (!current) return;
  const change: PassportChange = {
    kind: "binding.conflict",
    detail: { class: binding.class, value: binding.value, also_proven_by: claimant },
  };
  try {
    await db.batch(commitChangeStatements(db, current, change, SERVICE_SOURCE, new Date().toISOString()));
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
      db
        .update(bindings)
        .set({
          verificationState: "lapsed",
          lapsedAt: at,
          lapseReason: reason.slice(0, 500),
          verificationFreshUntil: null,
          verificationEvidenceId: null,
          lastCheckedAt: at,
          lastCheckResult: reason.slice(0, 500),
        })
        .where(eq(bindings.id, binding.id)),
    ],
  };
}

/**
 * Commits a check's change; if another change took the passport's next version meanwhile (the
 * events index refuses the second), the caller is told to try again instead of a server error.
 */
async function commitOrRefuse(db: Database, statements: ReturnType<typeof commitChangeStatements>) {
  try {
    await db.batch(statements);
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
    const rivals = await otherVerifiedHolders(db, passport, binding);
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
    await db
      .update(bindings)
      .set({ lastCheckedAt: at, lastCheckResult: result.reason.slice(0, 500) })
      .where(eq(bindings.id, binding.id));
  }
  return { result: "not_proven", reason: result.reason, target };
}
