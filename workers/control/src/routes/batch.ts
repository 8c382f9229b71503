import type { Context } from "hono";
import { requiredRole } from "../access/roles.ts";
import { problemOf } from "../api/problem.ts";
import { chargeWrite } from "../api/rate-limit.ts";
import type { BatchItem } from "../api/requests.ts";
import { passportView } from "../api/views.ts";
import { commitChange, commitCreation } from "../changes/apply.ts";
import {
  bindingAddition,
  bindingRemoval,
  displayUpdate,
  evidenceAddition,
  evidenceWithdrawal,
  roleForStateChange,
  stateChange,
} from "../changes/passport-changes.ts";
import type { AppEnv } from "../context.ts";
import type { Database } from "../db/client.ts";
import type { Role } from "../db/organisations.ts";
import type { PassportChange, PassportRow, StoredPassport } from "../db/passports.ts";
import { withUseTargets } from "../db/uses.ts";
import { verifiedAttestation } from "../evidence/attestation.ts";
import { Refusal } from "../failures.ts";
import { publishOrDefer } from "../publication/index.ts";
import { expectedVersions } from "./passport-answers.ts";

/** Publications of one batch run this many at a time (each is one sequencer call). */
const PUBLISH_CONCURRENCY = 10;

type Committed = { stored: StoredPassport; status: 200 | 201 } | Refusal;

/**
 * A batch item that changes one passport: which one, the version read, the rule (given the
 * passport's shard), and the role it needs.
 */
interface ItemChange {
  target: { identity_id: string; if_match?: string };
  build: (db: Database, passport: PassportRow) => PassportChange | Promise<PassportChange>;
  needs?: Role;
}

/** The single request's rule for each kind of change item (the routes in routes/passports.ts). */
function itemChange(c: Context<AppEnv>, item: Exclude<BatchItem, { create: unknown }>): ItemChange {
  const shards = c.get("shards");
  const { subject } = c.get("principal");
  if ("update" in item) {
    const { identity_id, if_match, ...fields } = item.update;
    return {
      target: { identity_id, if_match },
      build: (db, passport) => displayUpdate(db, shards, subject, passport, fields),
    };
  }
  if ("add_binding" in item) {
    const { binding, ...target } = item.add_binding;
    return { target, build: (db, passport) => bindingAddition(db, shards, passport, binding) };
  }
  if ("remove_binding" in item) {
    const { binding_id, ...target } = item.remove_binding;
    return { target, build: (db, passport) => bindingRemoval(db, passport, binding_id) };
  }
  if ("add_evidence" in item) {
    const { evidence, ...target } = item.add_evidence;
    return {
      target,
      build: async (db, passport) =>
        evidenceAddition(db, passport, evidence, await verifiedAttestation(c.env, passport.id, evidence)),
    };
  }
  if ("withdraw_evidence" in item) {
    const { evidence_id, ...target } = item.withdraw_evidence;
    return { target, build: (db, passport) => evidenceWithdrawal(db, passport, evidence_id) };
  }
  const { state, ...target } = item.change_state;
  return { target, build: (db, passport) => stateChange(db, passport, state), needs: roleForStateChange(state) };
}

/**
 * Commits each item in order, each in its own transaction with exactly the rules, role, history
 * event and outbox row of its single request (`commitCreation`, `commitChange` with the rule of
 * `itemChange`), in the shard of the item's organisation or passport (docs/sharding.md); a refused
 * item is its problem and does not stop the others. Then publishes every passport the batch changed once, for
 * the newest version it committed (a passport updated twice is published once), and answers one
 * result per item.
 */
export async function runBatch(c: Context<AppEnv>, items: BatchItem[]) {
  const shards = c.get("shards");
  const { subject } = c.get("principal");
  const minimum = c.get("declaredRole");
  const committed: Committed[] = [];
  for (const [index, item] of items.entries()) {
    if (index > 0 && !(await chargeWrite(c))) {
      committed.push(new Refusal("rate-limited", { detail: "Too many writes. Send this item again later." }));
      continue;
    }
    try {
      if ("create" in item) {
        committed.push({ stored: await commitCreation(shards, subject, minimum, item.create), status: 201 });
      } else {
        // The role the item's single request needs: the route's, or more (admin for a lifecycle change).
        const { target, build, needs } = itemChange(c, item);
        const db = await shards.forIdentity(target.identity_id);
        const request = {
          db,
          shards,
          subject,
          minimum: requiredRole(minimum, needs),
          expectedVersions: expectedVersions(target.if_match),
        };
        const stored = await commitChange(request, target.identity_id, (passport) => build(db, passport));
        committed.push({ stored, status: 200 });
      }
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      committed.push(error);
    }
  }
  const ids = [...new Set(committed.flatMap((r) => (r instanceof Refusal ? [] : [r.stored.passport.id])))];
  const published = new Map<string, number | undefined>();
  for (let start = 0; start < ids.length; start += PUBLISH_CONCURRENCY) {
    await Promise.all(
      ids
        .slice(start, start + PUBLISH_CONCURRENCY)
        .map(async (id) => published.set(id, await publishOrDefer(c.env, id))),
    );
  }
  return {
    results: await Promise.all(
      committed.map(async (result) => {
        if (result instanceof Refusal) {
          const problem = problemOf(result);
          return { status: problem.status, passport: null, problem };
        }
        const { passport, pending } = result.stored;
        const settled = (published.get(passport.id) ?? 0) >= passport.recordVersion;
        const shown = await withUseTargets(shards, result.stored);
        return {
          status: result.status,
          passport: passportView(shown, c.env, settled ? undefined : pending),
          problem: null,
        };
      }),
    ),
  };
}
