import { PROBLEM_TYPE_BASE, type Problem } from "@passport/domain";
import { type Context, Hono } from "hono";
import type { z } from "zod";
import type { BindingCheckView, PassportView } from "../api/views.ts";
import type { ApiCall, ApiResult } from "./api.ts";
import type { UiEnv } from "./context.ts";
import { confirmationDue, confirmationPage, finalChange } from "./passport-confirm.tsx";
import { passportDonePath, passportPage } from "./passport-page.tsx";
import { refuseForgedPost } from "./session.ts";

type UiContext = Context<UiEnv>;
type Fields = Record<string, string>;

/**
 * The passport forms. Each post is checked for Origin and synchronizer token, turned into one
 * Dashboard API call (with If-Match from the version the form was rendered at), and answered
 * with a redirect back to the passport on success, or the passport page with the API's problem
 * beside the form that caused it.
 */
export const passportActions = new Hono<UiEnv>();

function fieldsOf(form: FormData): Fields {
  const fields: Fields = {};
  for (const [key, value] of form) if (typeof value === "string" && key !== "csrf") fields[key] = value;
  return fields;
}

const optional = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);
/** datetime-local gives "2026-10-15T09:30" with no zone; the form says UTC. Anything else goes as typed, for the API to judge. */
const utc = (value: string | undefined) => {
  const text = optional(value);
  return text && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text)
    ? `${text.length === 16 ? `${text}:00` : text}Z`
    : text;
};

type Step = (fields: Fields, c: UiContext) => Promise<ApiResult<PassportView>>;
/** A page to show instead of making the change yet (a confirmation step), or undefined to go ahead. */
type Gate = (fields: Fields, c: UiContext) => Promise<Response | undefined>;

/** Revoking, retiring and marking a duplicate wait for the confirmation step (ui/passport-confirm.tsx). */
function confirmedFinal(action: "lifecycle" | "duplicate"): Gate {
  return async (fields, c) => {
    const change = finalChange(action, fields);
    const due = change ? confirmationDue(fields) : undefined;
    if (!change || !due) return undefined;
    return confirmationPage(c, c.req.param("id") as string, change, fields, due.problem);
  };
}

function handle(form: (c: UiContext) => string, done: string, step: Step, gate?: Gate) {
  return async (c: UiContext) => {
    const id = c.req.param("id") as string;
    const raw = await c.req.formData();
    const fields = fieldsOf(raw);
    const fail = (problem: Problem) => passportPage(c, id, { form: form(c), problem, values: fields });
    const refused = await refuseForgedPost(c.get("session"), raw);
    if (refused) {
      return fail({ type: `${PROBLEM_TYPE_BASE}forbidden`, title: "Form refused", status: 403, detail: refused });
    }
    const held = await gate?.(fields, c);
    if (held) return held;
    const result = await step(fields, c);
    if (!result.ok) return fail(result.problem);
    return c.redirect(passportDonePath(id, done), 303);
  };
}

function call(c: UiContext, path: string, fields: Fields, options: ApiCall) {
  const id = c.req.param("id") as string;
  return c.get("api").call<PassportView>(`/v1/passports/${encodeURIComponent(id)}${path}`, {
    ifMatch: fields.record_version ? `"v${fields.record_version}"` : undefined,
    ...options,
  });
}

passportActions.post(
  "/:id/bindings",
  handle(
    () => "binding-add",
    "binding-added",
    (f, c) =>
      call(c, "/bindings", f, {
        method: "POST",
        body: { class: f.class, value: f.value?.trim() ?? "", label: optional(f.label) },
      }),
  ),
);

/**
 * Editing a binding: the API keeps bindings immutable, so the new value is added first and the
 * old one removed only if that worked; a refused value leaves the passport as it was.
 */
passportActions.post(
  "/:id/bindings/:bindingId/replace",
  handle(
    (c) => `binding-replace-${c.req.param("bindingId")}`,
    "binding-replaced",
    async (f, c) => {
      const current = await call(c, "", {}, {});
      if (!current.ok) return current;
      const old = current.body.bindings.find((b) => b.id === c.req.param("bindingId"));
      if (!old) {
        return {
          ok: false,
          problem: { type: `${PROBLEM_TYPE_BASE}route-not-found`, title: "No such binding", status: 404 },
        };
      }
      const added = await call(c, "/bindings", f, {
        method: "POST",
        body: {
          class: old.class,
          value: f.value?.trim() ?? "",
          ...(old.label ? { label: old.label } : {}),
          ...(old.environment ? { environment: old.environment } : {}),
          ...(old.version ? { version: old.version } : {}),
        },
      });
      if (!added.ok) return added;
      return call(
        c,
        `/bindings/${old.id}`,
        { record_version: String(added.body.record_version) },
        { method: "DELETE" },
      );
    },
  ),
);

passportActions.post(
  "/:id/bindings/:bindingId/remove",
  handle(
    (c) => `binding-remove-${c.req.param("bindingId")}`,
    "binding-removed",
    (f, c) => call(c, `/bindings/${encodeURIComponent(c.req.param("bindingId") as string)}`, f, { method: "DELETE" }),
  ),
);

/**
 * "Verify now": verified goes back to the passport with a message; not proven renders the page
 * with the reason and the exact instructions beside the binding.
 */
passportActions.post("/:id/bindings/:bindingId/verify", async (c) => {
  const id = c.req.param("id");
  const bindingId = c.req.param("bindingId");
  const form = `binding-verify-${bindingId}`;
  const raw = await c.req.formData();
  const refused = await refuseForgedPost(c.get("session"), raw);
  if (refused) {
    const problem = { type: `${PROBLEM_TYPE_BASE}forbidden`, title: "Form refused", status: 403, detail: refused };
    return passportPage(c, id, { form, problem });
  }
  const result = await c
    .get("api")
    .call<z.infer<typeof BindingCheckView>>(
      `/v1/passports/${encodeURIComponent(id)}/bindings/${encodeURIComponent(bindingId)}/verify`,
      { method: "POST" },
    );
  if (!result.ok) return passportPage(c, id, { form, problem: result.problem });
  if (result.body.result === "verified") return c.redirect(passportDonePath(id, "binding-verified"), 303);
  return passportPage(c, id, undefined, result.body);
});

passportActions.post(
  "/:id/evidence",
  handle(
    () => "evidence-add",
    "evidence-added",
    (f, c) =>
      call(c, "/evidence", f, {
        method: "POST",
        body: {
          claim: f.claim ?? "",
          source: f.source ?? "",
          scope: f.scope ?? "",
          reference: optional(f.reference),
          observed_at: utc(f.observed_at) ?? "",
          fresh_until: utc(f.fresh_until),
        },
      }),
  ),
);

passportActions.post(
  "/:id/evidence/:evidenceId/withdraw",
  handle(
    (c) => `evidence-withdraw-${c.req.param("evidenceId")}`,
    "evidence-withdrawn",
    (f, c) => call(c, `/evidence/${encodeURIComponent(c.req.param("evidenceId") as string)}`, f, { method: "DELETE" }),
  ),
);

passportActions.post(
  "/:id/lifecycle",
  handle(
    () => "lifecycle",
    "lifecycle",
    (f, c) => call(c, "/state", f, { method: "PATCH", body: { lifecycle: f.lifecycle, reason: optional(f.reason) } }),
    confirmedFinal("lifecycle"),
  ),
);

passportActions.post(
  "/:id/state",
  handle(
    () => "state",
    "state",
    async (f, c) => {
      const current = await call(c, "", {}, {});
      if (!current.ok) return current;
      // Only what the user changed is sent, so saving an untouched form records no change.
      const wanted = {
        environment: optional(f.environment) ?? null,
        version: optional(f.version) ?? null,
        availability: optional(f.availability) ?? null,
      };
      const changes = Object.fromEntries(
        Object.entries(wanted).filter(([key, value]) => current.body.state[key as keyof typeof wanted] !== value),
      );
      if (Object.keys(changes).length === 0) return current;
      return call(c, "/state", f, { method: "PATCH", body: changes });
    },
  ),
);

/** Name, relationship and operator: only what the user changed is sent, so an untouched form records nothing. */
passportActions.post(
  "/:id/details",
  handle(
    () => "details",
    "details",
    async (f, c) => {
      const current = await call(c, "", {}, {});
      if (!current.ok) return current;
      const { display_name, organisation, operator } = current.body;
      const name = optional(f.display_name) ?? null;
      const changes = {
        ...(name !== display_name ? { display_name: name } : {}),
        ...(f.relationship && f.relationship !== organisation.relationship ? { relationship: f.relationship } : {}),
        ...((optional(f.operator_organisation_id) ?? null) !== (operator?.id ?? null)
          ? { operator_organisation_id: optional(f.operator_organisation_id) ?? null }
          : {}),
      };
      if (Object.keys(changes).length === 0) return current;
      return call(c, "", f, { method: "PATCH", body: changes });
    },
  ),
);

passportActions.post(
  "/:id/recheck",
  handle(
    () => "recheck",
    "recheck",
    // Asks for the pending checks now; the flag clears by itself once they pass (docs/lifecycle.md).
    (_, c) =>
      c.get("api").call<PassportView>(`/v1/passports/${encodeURIComponent(c.req.param("id") as string)}/recheck`, {
        method: "POST",
      }),
  ),
);

passportActions.post(
  "/:id/authority",
  handle(
    () => "authority-add",
    "authority-added",
    (f, c) =>
      call(c, "/authority", f, {
        method: "POST",
        body: authorityBody(f),
      }),
  ),
);

/**
 * The API body of the "Add authority" form: a grantor chosen as `organisation|relationship|id` or
 * `passport` (with the identity id typed beside it) makes a structured entry; none, free text.
 * Limits left empty are left out; a half-filled one goes as typed, for the API to refuse at its path.
 */
function authorityBody(f: Fields) {
  const [kind, relationship, id] = (f.granted_by ?? "").split("|");
  const grantor =
    kind === "organisation"
      ? { kind, relationship, id }
      : kind === "passport"
        ? { kind, relationship: "passport", id: optional(f.granting_passport) ?? "" }
        : undefined;
  const amount =
    optional(f.amount_value) || optional(f.amount_currency)
      ? { value: optional(f.amount_value) ?? "", currency: optional(f.amount_currency)?.toUpperCase() ?? "" }
      : undefined;
  const count = optional(f.rate_count);
  const rate = count ? { count: Number(count), per: f.rate_per ?? "hour" } : undefined;
  const limits = amount || rate ? { amount, rate } : undefined;
  const scope = optional(f.resource) || limits ? { resource: optional(f.resource), limits } : undefined;
  return {
    action: f.action?.trim() ?? "",
    context: grantor ? optional(f.context) : (f.context?.trim() ?? ""),
    granted_by: grantor,
    scope: grantor ? scope : undefined,
    expires_at: utc(f.expires_at),
  };
}

/** A binding's own environment and version; an empty field clears it, and only what changed is sent. */
passportActions.post(
  "/:id/bindings/:bindingId/context",
  handle(
    (c) => `binding-context-${c.req.param("bindingId")}`,
    "binding-context",
    async (f, c) => {
      const current = await call(c, "", {}, {});
      if (!current.ok) return current;
      const binding = current.body.bindings.find((b) => b.id === c.req.param("bindingId"));
      if (!binding) {
        return {
          ok: false,
          problem: { type: `${PROBLEM_TYPE_BASE}route-not-found`, title: "No such binding", status: 404 },
        };
      }
      const wanted = { environment: optional(f.environment) ?? null, version: optional(f.version) ?? null };
      const changes = Object.fromEntries(
        Object.entries(wanted).filter(([key, value]) => binding[key as keyof typeof wanted] !== value),
      );
      if (Object.keys(changes).length === 0) return current;
      return call(c, `/bindings/${encodeURIComponent(binding.id)}`, f, { method: "PATCH", body: changes });
    },
  ),
);

passportActions.post(
  "/:id/authority/:authorityId/expire",
  handle(
    (c) => `authority-expire-${c.req.param("authorityId")}`,
    "authority-expired",
    (f, c) =>
      call(c, `/authority/${encodeURIComponent(c.req.param("authorityId") as string)}/expire`, f, {
        method: "POST",
        body: {},
      }),
  ),
);

passportActions.post(
  "/:id/authority/:authorityId/remove",
  handle(
    (c) => `authority-remove-${c.req.param("authorityId")}`,
    "authority-removed",
    (f, c) =>
      call(c, `/authority/${encodeURIComponent(c.req.param("authorityId") as string)}`, f, { method: "DELETE" }),
  ),
);

passportActions.post(
  "/:id/uses",
  handle(
    () => "uses-add",
    "uses-declared",
    (f, c) => call(c, "/uses", f, { method: "POST", body: { identity_id: f.identity_id?.trim() ?? "" } }),
  ),
);

passportActions.post(
  "/:id/uses/:targetId/remove",
  handle(
    (c) => `uses-remove-${c.req.param("targetId")}`,
    "uses-removed",
    (f, c) => call(c, `/uses/${encodeURIComponent(c.req.param("targetId") as string)}`, f, { method: "DELETE" }),
  ),
);

passportActions.post(
  "/:id/transfer",
  handle(
    () => "transfer",
    "transferred",
    (f, c) =>
      call(c, "/transfer", f, {
        method: "POST",
        body: { organisation_id: f.organisation_id ?? "", reason: f.reason?.trim() ?? "" },
      }),
  ),
);

passportActions.post(
  "/:id/duplicate",
  handle(
    () => "duplicate",
    "duplicate",
    (f, c) =>
      call(c, "/duplicate-of", f, {
        method: "POST",
        body: { survivor_id: f.survivor_id?.trim() ?? "", reason: f.reason?.trim() ?? "" },
      }),
    confirmedFinal("duplicate"),
  ),
);
