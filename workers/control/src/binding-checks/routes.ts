import { Hono } from "hono";
import { z } from "zod";
import { requireRole, visiblePassport } from "../access/membership.ts";
import { operation } from "../api/operations.ts";
import { BindingCheckView, passportView } from "../api/views.ts";
import type { AppEnv } from "../context.ts";
import type { Database } from "../db/client.ts";
import { bindingOf } from "../db/passport-entries.ts";
import { loadAggregate, type PassportRow } from "../db/passports.ts";
import { withUseTargets } from "../db/uses.ts";
import { Refusal } from "../failures.ts";
import { instructionsFor } from "./checks.ts";
import { limitChecks } from "./limits.ts";
import { reevaluationOf, requestReevaluationChecks } from "./reevaluation.ts";
import { runBindingCheck } from "./verify.ts";

/** The binding check a member asks for, mounted at /v1/passports. */
export const checks = new Hono<AppEnv>();

checks.use("/:id/bindings/:bindingId/verify", limitChecks);
checks.use("/:id/recheck", limitChecks);

checks.post(
  "/:id/bindings/:bindingId/verify",
  operation({
    method: "post",
    path: "/v1/passports/{id}/bindings/{bindingId}/verify",
    summary: "Check control of a binding now (answers what to publish when it is not proven)",
    role: "editor",
    response: { BindingCheckView },
  }),
  async (c) => {
    const id = c.req.param("id");
    const { passport, membership } = await visiblePassport(c.get("db"), c.get("principal").subject, id);
    requireRole(membership, c.get("declaredRole"));
    if (passport.lifecycle === "retired") {
      throw new Refusal("invalid-transition", {
        detail: "Retired passports are kept exactly as they were; their bindings are not checked.",
        allowed: [],
      });
    }
    const db = c.get("db");
    const binding = await bindingOf(db, id, c.req.param("bindingId"));
    if (!binding) throw new Refusal("route-not-found", { detail: "This passport has no binding with that id." });
    const outcome = await runBindingCheck(c.env, db, passport, binding, c.get("principal").subject);
    const loaded = await loadAggregate(db, id);
    if (!loaded) throw new Error(`passport ${id} vanished`);
    // An agent's uses links may name passports in other shards: their names come from there.
    const stored = await withUseTargets(c.get("shards"), loaded);
    return c.json({
      binding_id: binding.id,
      result: outcome.result,
      reason: outcome.reason,
      instructions: instructionsFor(outcome.target),
      passport: passportView(stored, c.env, stored.pending),
    });
  },
);

/** What a passport's re-evaluation waits for (docs/lifecycle.md#re-evaluation). */
export const RecheckView = z.object({
  identity_id: z.string(),
  recheck_required: z
    .boolean()
    .describe("The record's state.recheck_required: consumers re-evaluate before relying on it."),
  since: z.string().nullable().describe("When the re-evaluation began (the reactivation); null when none is pending."),
  pending: z
    .object({
      bindings: z
        .array(
          z.object({
            id: z.string(),
            class: z.string(),
            value: z.string(),
            verification_state: z.enum(["verified", "lapsed"]),
            next_check_at: z.string().nullable().describe("When the scheduled check takes it next."),
            last_checked_at: z.string().nullable(),
            last_check_result: z.string().nullable().describe("Why the last check did not pass, or how it passed."),
          }),
        )
        .describe(
          "Bindings that held proof when the re-evaluation began and have not passed a check since: still unchecked or unreachable (verified), or lapsed by a check that contradicted the proof.",
        ),
      claims: z
        .array(z.string())
        .describe(
          "Claims whose evidence is all from before the re-evaluation: each needs a current item observed and written since (a passing check renews the service's own; members assert or attest again).",
        ),
    })
    .describe("Empty lists while recheck_required is true: the flag clears on the next scheduler run."),
  scheduled: z
    .int()
    .optional()
    .describe("POST only: how many pending bindings were made due for the next scheduler run."),
});

/** The re-check view of `passport` as the route read it (asking for checks changes only its bindings). */
async function recheckAnswer(db: Database, passport: PassportRow, scheduled?: number) {
  const reevaluation = await reevaluationOf(db, passport, new Date());
  return {
    identity_id: passport.id,
    recheck_required: passport.recheckRequired,
    since: reevaluation?.since ?? null,
    pending: { bindings: reevaluation?.bindings ?? [], claims: reevaluation?.claims ?? [] },
    ...(scheduled !== undefined ? { scheduled } : {}),
  };
}

checks.get(
  "/:id/recheck",
  operation({
    method: "get",
    path: "/v1/passports/{id}/recheck",
    summary:
      "What the re-check after a reactivation still waits for: bindings to pass a check, claims to get fresh evidence",
    role: "viewer",
    response: { RecheckView },
  }),
  async (c) => {
    const id = c.req.param("id");
    const { passport, membership } = await visiblePassport(c.get("db"), c.get("principal").subject, id);
    requireRole(membership, c.get("declaredRole"));
    return c.json(await recheckAnswer(c.get("db"), passport));
  },
);

checks.post(
  "/:id/recheck",
  operation({
    method: "post",
    path: "/v1/passports/{id}/recheck",
    summary:
      "Ask for the pending re-checks now: the bindings still waiting are checked on the next scheduler run (within a minute); the flag clears once they pass",
    role: "editor",
    response: { RecheckView },
    status: 202,
  }),
  async (c) => {
    const id = c.req.param("id");
    const db = c.get("db");
    const { passport, membership } = await visiblePassport(db, c.get("principal").subject, id);
    requireRole(membership, c.get("declaredRole"));
    if (passport.lifecycle === "retired") {
      throw new Refusal("invalid-transition", {
        detail: "Retired passports are kept exactly as they were; their bindings are not checked.",
        allowed: [],
      });
    }
    const scheduled = await requestReevaluationChecks(db, passport);
    return c.json(await recheckAnswer(db, passport, scheduled), 202);
  },
);
