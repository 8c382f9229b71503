import { Hono } from "hono";
import { requireRole, visiblePassport } from "../access/membership.ts";
import { operation } from "../api/operations.ts";
import { HttpProblem } from "../api/problem.ts";
import { BindingCheckView, passportView } from "../api/views.ts";
import type { AppEnv } from "../context.ts";
import { bindingOf } from "../db/passport-entries.ts";
import { loadAggregate } from "../db/passports.ts";
import { instructionsFor } from "./checks.ts";
import { limitChecks } from "./limits.ts";
import { runBindingCheck } from "./verify.ts";

/** The binding check a member asks for, mounted at /v1/passports. */
export const checks = new Hono<AppEnv>();

checks.use("/:id/bindings/:bindingId/verify", limitChecks);

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
      throw new HttpProblem("invalid-transition", {
        detail: "Retired passports are kept exactly as they were; their bindings are not checked.",
        allowed: [],
      });
    }
    const db = c.get("db");
    const binding = await bindingOf(db, id, c.req.param("bindingId"));
    if (!binding) throw new HttpProblem("route-not-found", { detail: "This passport has no binding with that id." });
    const outcome = await runBindingCheck(c.env, db, passport, binding, c.get("principal").subject);
    const stored = await loadAggregate(db, id);
    if (!stored) throw new Error(`passport ${id} vanished`);
    return c.json({
      binding_id: binding.id,
      result: outcome.result,
      reason: outcome.reason,
      instructions: instructionsFor(outcome.target),
      passport: passportView(stored, c.env, stored.pending),
    });
  },
);
