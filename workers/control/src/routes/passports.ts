import {
  allowedTransitions,
  canTransition,
  isReactivation,
  mintIdentityId,
  PRIMARY_BINDING_CLASS,
} from "@passport/domain";
import { and, eq, isNull } from "drizzle-orm";
import { Hono } from "hono";
import { requireMembership } from "../access.ts";
import type { AppEnv } from "../context.ts";
import type { Database } from "../db/client.ts";
import { membershipIn, membershipsOf } from "../db/organisations.ts";
import { createPassportStatements, historyOf, listPassports, passportsWithBinding } from "../db/passports.ts";
import { authority, bindings, evidence } from "../db/schema.ts";
import { HttpProblem } from "../http-problem.ts";
import { decodeCursor, encodeCursor } from "../pagination.ts";
import { applyChange, requireRole, respondWithPassport, visiblePassport } from "../passport-access.ts";
import { publishOrDefer } from "../publish.ts";
import {
  AuthorityInput,
  BindingInput,
  bindingClassRefusal,
  CreatePassportRequest,
  EvidenceInput,
  ListPassportsQuery,
  MarkDuplicateRequest,
  StateChangeRequest,
  TransferRequest,
  UpdatePassportRequest,
} from "../requests.ts";
import { jsonBody, queryParams } from "../validation.ts";
import { historyEvent, passportSummary } from "../views.ts";

export const passports = new Hono<AppEnv>();

/** Refuses a primary binding already held by another active passport of the family (spec 1.6). */
async function refuseDuplicates(
  db: Database,
  organisationId: string,
  family: "api" | "agent",
  candidates: { class: string; value: string }[],
  exceptId?: string,
): Promise<void> {
  const primary = PRIMARY_BINDING_CLASS[family];
  const values = candidates.filter((b) => b.class === primary).map((b) => b.value);
  const clashes = (await passportsWithBinding(db, organisationId, family, primary, values)).filter(
    (p) => p.id !== exceptId,
  );
  const [clash] = clashes;
  if (clash) {
    throw new HttpProblem("duplicate-identity", {
      detail: `Passport ${clash.id} already identifies the object at ${primary} ${clash.value}. Update that passport, or declare a materially distinct object with distinct_object_reason.`,
      existing_identity_id: clash.id,
    });
  }
}

passports.post("/", jsonBody(CreatePassportRequest), async (c) => {
  const db = c.get("db");
  const { subject } = c.get("principal");
  const body = c.req.valid("json");
  const membership = await requireMembership(db, subject, body.organisation_id, "editor");
  if (!body.distinct_object_reason) {
    await refuseDuplicates(db, membership.organisationId, body.family, body.bindings);
  }
  const id = mintIdentityId();
  await db.batch(
    createPassportStatements(db, {
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
    }),
  );
  await publishOrDefer(c.env, id);
  c.header("location", `/v1/passports/${id}`);
  return respondWithPassport(c, id, 201);
});

passports.get("/", queryParams(ListPassportsQuery), async (c) => {
  const db = c.get("db");
  const query = c.req.valid("query");
  const memberships = await membershipsOf(db, c.get("principal").subject);
  const organisationIds = memberships
    .map((m) => m.organisationId)
    .filter((id) => !query.organisation_id || id === query.organisation_id);
  const rows = await listPassports(db, {
    organisationIds,
    family: query.family,
    lifecycle: query.lifecycle,
    environment: query.environment,
    after: query.cursor ? decodeCursor(query.cursor) : undefined,
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return c.json({
    items: page.map((row) => passportSummary(row, c.env)),
    next_cursor: rows.length > query.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
  });
});

passports.get("/:id", async (c) => {
  await visiblePassport(c, c.req.param("id"));
  return respondWithPassport(c, c.req.param("id"));
});

passports.patch("/:id", jsonBody(UpdatePassportRequest), (c) =>
  applyChange(c, c.req.param("id"), "editor", () => {
    const { display_name } = c.req.valid("json");
    return { kind: "display.updated", detail: { display_name }, set: { displayName: display_name } };
  }),
);

passports.post("/:id/bindings", jsonBody(BindingInput), (c) =>
  applyChange(c, c.req.param("id"), "editor", async (passport) => {
    const binding = c.req.valid("json");
    const refusal = bindingClassRefusal(passport.family, binding.class);
    if (refusal) {
      throw new HttpProblem("invalid-request", {
        detail: `${refusal}.`,
        errors: [{ path: "class", message: refusal }],
      });
    }
    const db = c.get("db");
    const existing = await db.query.bindings.findFirst({
      where: and(
        eq(bindings.passportId, passport.id),
        eq(bindings.class, binding.class),
        eq(bindings.value, binding.value),
      ),
    });
    if (existing) {
      throw new HttpProblem("binding-exists", {
        detail: "This passport already has that binding.",
        binding_id: existing.id,
      });
    }
    await refuseDuplicates(db, passport.organisationId, passport.family, [binding], passport.id);
    const id = crypto.randomUUID();
    const at = new Date().toISOString();
    return {
      kind: "binding.added",
      detail: { binding_id: id, class: binding.class, value: binding.value },
      statements: [db.insert(bindings).values({ id, passportId: passport.id, ...binding, boundAt: at })],
    };
  }),
);

passports.delete("/:id/bindings/:bindingId", (c) =>
  applyChange(c, c.req.param("id"), "editor", async (passport) => {
    const db = c.get("db");
    const binding = await db.query.bindings.findFirst({
      where: and(eq(bindings.id, c.req.param("bindingId")), eq(bindings.passportId, passport.id)),
    });
    if (!binding) throw new HttpProblem("route-not-found", { detail: "This passport has no binding with that id." });
    return {
      kind: "binding.removed",
      detail: { binding_id: binding.id, class: binding.class, value: binding.value },
      statements: [db.delete(bindings).where(eq(bindings.id, binding.id))],
    };
  }),
);

passports.post("/:id/evidence", jsonBody(EvidenceInput), (c) =>
  applyChange(c, c.req.param("id"), "editor", (passport) => {
    const input = c.req.valid("json");
    const id = `ev_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
    const db = c.get("db");
    return {
      kind: "evidence.added",
      detail: { evidence_id: id, claim: input.claim, source: input.source },
      statements: [
        db.insert(evidence).values({
          id,
          passportId: passport.id,
          claim: input.claim,
          source: input.source,
          scope: input.scope,
          reference: input.reference,
          observedAt: new Date(input.observed_at).toISOString(),
          freshUntil: input.fresh_until ? new Date(input.fresh_until).toISOString() : undefined,
        }),
      ],
    };
  }),
);

passports.delete("/:id/evidence/:evidenceId", (c) =>
  applyChange(c, c.req.param("id"), "editor", async (passport) => {
    const db = c.get("db");
    const item = await db.query.evidence.findFirst({
      where: and(
        eq(evidence.id, c.req.param("evidenceId")),
        eq(evidence.passportId, passport.id),
        isNull(evidence.withdrawnAt),
      ),
    });
    if (!item)
      throw new HttpProblem("route-not-found", { detail: "This passport has no current evidence with that id." });
    return {
      kind: "evidence.withdrawn",
      detail: { evidence_id: item.id, claim: item.claim },
      statements: [db.update(evidence).set({ withdrawnAt: new Date().toISOString() }).where(eq(evidence.id, item.id))],
    };
  }),
);

passports.patch("/:id/state", jsonBody(StateChangeRequest), async (c) => {
  const body = c.req.valid("json");
  const lifecycleChange = body.lifecycle !== undefined;
  return applyChange(c, c.req.param("id"), lifecycleChange ? "admin" : "editor", (passport) => {
    const to = body.lifecycle;
    if (to && to !== passport.lifecycle && !canTransition(passport.lifecycle, to)) {
      const allowed = allowedTransitions(passport.lifecycle);
      throw new HttpProblem("invalid-transition", {
        detail: `A ${passport.lifecycle} passport cannot become ${to}. Allowed: ${allowed.join(", ") || "none"}.`,
        current: passport.lifecycle,
        allowed,
      });
    }
    const at = new Date().toISOString();
    const reactivated = to !== undefined && isReactivation(passport.lifecycle, to);
    const set = {
      ...(to ? { lifecycle: to } : {}),
      ...(body.availability !== undefined ? { availability: body.availability } : {}),
      ...(body.environment !== undefined ? { environment: body.environment } : {}),
      ...(body.version !== undefined ? { version: body.version } : {}),
      ...(reactivated ? { recheckRequired: true } : body.recheck_completed ? { recheckRequired: false } : {}),
      stateAsOf: at,
    };
    return {
      kind: reactivated ? "state.reactivated" : lifecycleChange ? "state.lifecycle_changed" : "state.changed",
      detail: {
        ...(to ? { lifecycle: { from: passport.lifecycle, to } } : {}),
        ...(body.availability !== undefined ? { availability: body.availability } : {}),
        ...(body.environment !== undefined ? { environment: body.environment } : {}),
        ...(body.version !== undefined ? { version: body.version } : {}),
        ...(reactivated ? { recheck_required: true } : {}),
        ...(body.recheck_completed ? { recheck_completed: true } : {}),
        ...(body.reason ? { reason: body.reason } : {}),
      },
      set,
    };
  });
});

passports.post("/:id/authority", jsonBody(AuthorityInput), (c) =>
  applyChange(c, c.req.param("id"), "editor", (passport) => {
    const input = c.req.valid("json");
    const id = `au_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
    return {
      kind: "authority.added",
      detail: { authority_id: id, action: input.action },
      statements: [
        c
          .get("db")
          .insert(authority)
          .values({
            id,
            passportId: passport.id,
            action: input.action,
            context: input.context,
            grantedBy: input.granted_by,
            expiresAt: input.expires_at ? new Date(input.expires_at).toISOString() : undefined,
          }),
      ],
    };
  }),
);

passports.delete("/:id/authority/:authorityId", (c) =>
  applyChange(c, c.req.param("id"), "editor", async (passport) => {
    const db = c.get("db");
    const entry = await db.query.authority.findFirst({
      where: and(eq(authority.id, c.req.param("authorityId")), eq(authority.passportId, passport.id)),
    });
    if (!entry)
      throw new HttpProblem("route-not-found", { detail: "This passport has no authority entry with that id." });
    return {
      kind: "authority.removed",
      detail: { authority_id: entry.id, action: entry.action },
      statements: [db.delete(authority).where(eq(authority.id, entry.id))],
    };
  }),
);

passports.post("/:id/duplicate-of", jsonBody(MarkDuplicateRequest), async (c) => {
  const { survivor_id, reason } = c.req.valid("json");
  const id = c.req.param("id");
  if (survivor_id === id) throw new HttpProblem("invalid-request", { detail: "A passport cannot duplicate itself." });
  const { passport: survivor } = await visiblePassport(c, survivor_id);
  return applyChange(c, id, "admin", (duplicate) => {
    if (survivor.family !== duplicate.family || survivor.lifecycle === "retired" || survivor.duplicateOf) {
      throw new HttpProblem("invalid-request", {
        detail: "The surviving passport must be an operative passport of the same family.",
      });
    }
    return {
      kind: "duplicate.retired",
      detail: { survivor_id, reason, lifecycle: { from: duplicate.lifecycle, to: "retired" } },
      set: { lifecycle: "retired", duplicateOf: survivor_id, stateAsOf: new Date().toISOString() },
    };
  });
});

passports.post("/:id/transfer", jsonBody(TransferRequest), async (c) => {
  const { organisation_id, reason } = c.req.valid("json");
  const target = await membershipIn(c.get("db"), c.get("principal").subject, organisation_id);
  if (!target) throw new HttpProblem("route-not-found", { detail: "No such organisation." });
  requireRole(target, "owner");
  return applyChange(c, c.req.param("id"), "owner", (passport) => {
    if (passport.organisationId === organisation_id) {
      throw new HttpProblem("invalid-request", { detail: "The passport already belongs to that organisation." });
    }
    return {
      kind: "responsibility.changed",
      detail: { from: passport.organisationId, to: organisation_id, reason },
      set: { organisationId: organisation_id },
    };
  });
});

passports.get("/:id/history", async (c) => {
  const id = c.req.param("id");
  await visiblePassport(c, id);
  const after = Number(c.req.query("after") ?? "0");
  const limit = Math.min(Number(c.req.query("limit") ?? "100"), 500);
  if (!Number.isInteger(after) || after < 0 || !Number.isInteger(limit) || limit < 1) {
    throw new HttpProblem("invalid-request", { detail: "after and limit must be non-negative integers." });
  }
  const rows = await historyOf(c.get("db"), id, after, limit + 1);
  const page = rows.slice(0, limit);
  return c.json({
    items: page.map(historyEvent),
    next_after: rows.length > limit ? (page.at(-1)?.seq ?? null) : null,
  });
});
