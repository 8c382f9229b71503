import {
  BINDING_CLASSES_BY_FAMILY,
  type Family,
  PASSPORT_FAMILIES,
  PRIMARY_BINDING_CLASS,
  PROBLEM_TYPE_BASE,
  type Problem,
} from "@passport/domain";
import { type Context, Hono } from "hono";
import { roleAtLeast } from "../access/roles.ts";
import type { PassportView } from "../api/views.ts";
import { problemSlug } from "./api.ts";
import type { UiEnv } from "./context.ts";
import { BINDING_LABELS } from "./labels.ts";
import { fieldError, Layout, ProblemMessage } from "./layout.tsx";
import { type Failure, Field } from "./passport-forms/parts.tsx";
import type { OrganisationItem } from "./passport-list.tsx";
import { refuseForgedPost } from "./session.ts";

type UiContext = Context<UiEnv>;
const FORM = "create";
const FAMILY_LABELS: Record<Family, string> = { api: "API passport", agent: "Agent passport" };

/** The duplicate refusal's pointer to the passport that already identifies the object. */
function ExistingPassport(props: { problem: Problem; resolverBase: string }) {
  const existing = props.problem.existing_identity_id;
  if (typeof existing !== "string") return null;
  // A verified holder in another organisation is not visible in this Dashboard; its public record is.
  const elsewhere = props.problem.verified_holder !== undefined;
  return (
    <p id="existing-passport">
      {elsewhere ? (
        <a href={`${props.resolverBase}/p/${existing}`}>See the passport that holds it ({existing})</a>
      ) : (
        <a href={`/dashboard/passports/${existing}`}>Open the existing passport ({existing})</a>
      )}
    </p>
  );
}

/**
 * "New passport": organisation (those the viewer may edit in), family, name, the primary binding
 * and one more, environment and version. A duplicate refusal links the passport that already
 * identifies the object and then offers the "materially distinct object" reason (spec 1.6).
 */
async function createPage(c: UiContext, failure?: Failure) {
  const viewer = c.get("viewer");
  const organisations = await c.get("api").call<{ items: OrganisationItem[] }>("/v1/organisations");
  const editable = organisations.ok ? organisations.body.items.filter((o) => roleAtLeast(o.role, "editor")) : [];
  const values = failure?.values ?? { organisation_id: c.req.query("organisation") ?? "" };
  const duplicate = failure && problemSlug(failure.problem) === "duplicate-identity";
  const distinctOffered = duplicate || Boolean(values.distinct_object_reason);
  // API passports come through the marketplace; only owners and admins create one here
  // (docs/api-passports.md), so the family is offered where the viewer's role allows it: in the
  // organisation already chosen, else in any they may edit.
  const chosen = editable.find((o) => o.id === values.organisation_id);
  const apiAllowed = chosen ? roleAtLeast(chosen.role, "admin") : editable.some((o) => roleAtLeast(o.role, "admin"));
  const apiRestricted = editable.some((o) => !roleAtLeast(o.role, "admin"));
  const families = PASSPORT_FAMILIES.filter((f) => f !== "api" || apiAllowed);
  const family = (families as readonly string[]).includes(values.family ?? "")
    ? (values.family as Family)
    : (families[0] ?? "agent");
  // The extra binding follows the primary one in the request, so its errors' index depends on it.
  const extraPath = values.primary ? "bindings.1" : "bindings.0";
  const extraClassError = fieldError(failure?.problem, `${extraPath}.class`);
  return c.html(
    <Layout title="New passport" viewer={viewer}>
      <p>
        <a href="/dashboard/passports">← All passports</a>
      </p>
      <h1>New passport</h1>
      {editable.length === 0 ? (
        <p>You need the editor role in an organisation to create passports there.</p>
      ) : (
        <form method="post" action="/dashboard/passports/new" id={FORM}>
          <input type="hidden" name="csrf" value={viewer.csrf} />
          <fieldset>
            <legend>What the passport identifies</legend>
            <div class="row">
              <Field form={FORM} name="organisation_id" label="Responsible organisation" failure={failure}>
                <select id={`${FORM}-organisation_id`} name="organisation_id">
                  {editable.map((o) => (
                    <option value={o.id} selected={values.organisation_id === o.id}>
                      {o.name} ({o.role})
                    </option>
                  ))}
                </select>
              </Field>
              <Field form={FORM} name="family" label="Family" failure={failure}>
                <select id={`${FORM}-family`} name="family">
                  {families.map((f) => (
                    <option value={f} selected={family === f}>
                      {FAMILY_LABELS[f]}
                    </option>
                  ))}
                </select>
              </Field>
              <div class="grow">
                <Field
                  form={FORM}
                  name="display_name"
                  label="Name"
                  failure={failure}
                  hint="Public, e.g. Payments API. A passport needs a name, a primary binding or both."
                />
              </div>
            </div>
            {apiRestricted ? (
              <p class="hint" id="family-note">
                API passports come through your marketplace subscription;{" "}
                {apiAllowed
                  ? "you create another here only where you are owner or admin, for a materially distinct API."
                  : "only an owner or admin creates another here, for a materially distinct API."}
              </p>
            ) : null}
            <Field
              form={FORM}
              name="primary"
              path="bindings.0.value"
              label="Primary binding (optional)"
              failure={failure}
              hint="What says “this is the same object”: the endpoint's base URL for an API passport, the agent manifest's URL for an agent passport."
            />
            <div class="row">
              <Field form={FORM} name="extra_class" label="Another binding (optional)" failure={failure}>
                <select
                  id={`${FORM}-extra_class`}
                  name="extra_class"
                  aria-invalid={extraClassError ? "true" : undefined}
                  aria-describedby={extraClassError ? `${FORM}-extra_class-error` : undefined}
                >
                  {[...new Set([...BINDING_CLASSES_BY_FAMILY.api, ...BINDING_CLASSES_BY_FAMILY.agent])].map((cls) => (
                    <option value={cls} selected={values.extra_class === cls}>
                      {BINDING_LABELS[cls]}
                    </option>
                  ))}
                </select>
              </Field>
              <div class="grow">
                <Field form={FORM} name="extra_value" path={`${extraPath}.value`} label="Its value" failure={failure} />
              </div>
            </div>
            <div class="row">
              <Field form={FORM} name="environment" label="Environment (optional)" failure={failure} />
              <Field form={FORM} name="version" label="Version (optional)" failure={failure} />
            </div>
            <p class="hint">
              Everything here is published in the public record: never put credentials or tokens in it.
            </p>
          </fieldset>
          {failure ? <ProblemMessage problem={failure.problem} id={`${FORM}-problem`} /> : null}
          {duplicate && failure ? (
            <ExistingPassport problem={failure.problem} resolverBase={c.env.RESOLVER_BASE_URL} />
          ) : null}
          {distinctOffered ? (
            <fieldset id="distinct">
              <legend>Or: a materially distinct object</legend>
              <p class="hint">
                Only when this is a different object that happens to share the primary binding (for example an admin
                interface behind the same host with its own responsibility). The reason is public in the history.
              </p>
              <Field form={FORM} name="distinct_object_reason" label="Why it is a distinct object" failure={failure} />
            </fieldset>
          ) : null}
          <p>
            <button type="submit">Create passport</button>
          </p>
        </form>
      )}
    </Layout>,
    failure ? (failure.problem.status as 400) : 200,
  );
}

const trimmed = (value: unknown) => (typeof value === "string" ? value.trim() : "");

export const passportCreation = new Hono<UiEnv>();

passportCreation.get("/new", (c) => createPage(c));

passportCreation.post("/new", async (c) => {
  const form = await c.req.formData();
  const values: Record<string, string> = {};
  for (const key of [
    "organisation_id",
    "family",
    "display_name",
    "primary",
    "extra_class",
    "extra_value",
    "environment",
    "version",
    "distinct_object_reason",
  ]) {
    values[key] = trimmed(form.get(key));
  }
  const refused = await refuseForgedPost(c.get("session"), form);
  if (refused) {
    const problem = { type: `${PROBLEM_TYPE_BASE}forbidden`, title: "Form refused", status: 403, detail: refused };
    return createPage(c, { form: FORM, problem, values });
  }
  const family = values.family as Family;
  const bindings = [
    values.primary ? { class: PRIMARY_BINDING_CLASS[family] ?? "endpoint", value: values.primary } : undefined,
    values.extra_value ? { class: values.extra_class, value: values.extra_value } : undefined,
  ];
  const created = await c.get("api").call<PassportView>("/v1/passports", {
    method: "POST",
    body: {
      organisation_id: values.organisation_id || undefined,
      family,
      display_name: values.display_name || undefined,
      environment: values.environment || undefined,
      version: values.version || undefined,
      bindings: bindings.filter((b) => b !== undefined),
      distinct_object_reason: values.distinct_object_reason || undefined,
    },
  });
  if (!created.ok) return createPage(c, { form: FORM, problem: created.problem, values });
  return c.redirect(`/dashboard/passports/${created.body.identity_id}?done=created`, 303);
});
