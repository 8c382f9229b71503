import type { Context } from "hono";
import { HttpProblem } from "../api/problem.ts";
import { chargeWrite } from "../api/rate-limit.ts";
import type { BatchItem } from "../api/requests.ts";
import { passportView } from "../api/views.ts";
import { commitCreation } from "../changes/apply.ts";
import { displayUpdate } from "../changes/passport-changes.ts";
import type { AppEnv } from "../context.ts";
import type { StoredPassport } from "../db/passports.ts";
import { publishOrDefer } from "../publication/index.ts";
import { commitOrAnswer, expectedVersions } from "./passport-answers.ts";

/** Publications of one batch run this many at a time (each is one sequencer call). */
const PUBLISH_CONCURRENCY = 10;

type Committed = { stored: StoredPassport; status: 200 | 201 } | HttpProblem;

/**
 * Commits each item in order, each in its own transaction with exactly the rules, history event
 * and outbox row of its single request (`commitCreation`, `commitChange`); a refused item is its
 * problem and does not stop the others. Then publishes every passport the batch changed once, for
 * the newest version it committed (a passport updated twice is published once), and answers one
 * result per item.
 */
export async function runBatch(c: Context<AppEnv>, items: BatchItem[]) {
  const db = c.get("db");
  const { subject } = c.get("principal");
  const minimum = c.get("declaredRole");
  const committed: Committed[] = [];
  for (const [index, item] of items.entries()) {
    if (index > 0 && !(await chargeWrite(c))) {
      committed.push(new HttpProblem("rate-limited", { detail: "Too many writes. Send this item again later." }));
      continue;
    }
    try {
      if ("create" in item) {
        committed.push({ stored: await commitCreation(db, subject, minimum, item.create), status: 201 });
      } else {
        const { identity_id, if_match, ...fields } = item.update;
        const request = { db, subject, minimum, expectedVersions: expectedVersions(if_match) };
        committed.push({
          stored: await commitOrAnswer(request, identity_id, (passport) =>
            displayUpdate(db, subject, passport, fields),
          ),
          status: 200,
        });
      }
    } catch (error) {
      if (!(error instanceof HttpProblem)) throw error;
      committed.push(error);
    }
  }
  const ids = [...new Set(committed.flatMap((r) => (r instanceof HttpProblem ? [] : [r.stored.passport.id])))];
  const published = new Map<string, number | undefined>();
  for (let start = 0; start < ids.length; start += PUBLISH_CONCURRENCY) {
    await Promise.all(
      ids
        .slice(start, start + PUBLISH_CONCURRENCY)
        .map(async (id) => published.set(id, await publishOrDefer(c.env, id))),
    );
  }
  return {
    results: committed.map((result) => {
      if (result instanceof HttpProblem) return { status: result.body.status, passport: null, problem: result.body };
      const { passport, pending } = result.stored;
      const settled = (published.get(passport.id) ?? 0) >= passport.recordVersion;
      return {
        status: result.status,
        passport: passportView(result.stored, c.env, settled ? undefined : pending),
        problem: null,
      };
    }),
  };
}
