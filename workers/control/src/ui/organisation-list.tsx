import { PROBLEM_TYPE_BASE, type Problem } from "@passport/domain";
import { type Context, Hono } from "hono";
import type { UiEnv } from "./context.ts";
import { FieldError, fieldError, Layout, ProblemMessage } from "./layout.tsx";
import type { OrganisationItem } from "./passport-list.tsx";
import { refuseForgedPost } from "./session.ts";

type UiContext = Context<UiEnv>;
const ADMINISTERS = new Set(["owner", "admin"]);

/** The Dashboard path of an organisation's page. */
export function organisationPath(id: string, query = ""): string {
  return `/dashboard/organisations/${encodeURIComponent(id)}${query}`;
}

/**
 * An organisation named on a page: a link to its page when the viewer is a member (the API answers
 * anyone else's request for it with 404), otherwise its name and id with the reason there is no link.
 */
export function OrganisationName(props: { organisation: { id: string; name: string }; memberOf: ReadonlySet<string> }) {
  const { organisation } = props;
  return props.memberOf.has(organisation.id) ? (
    <a href={organisationPath(organisation.id)}>{organisation.name}</a>
  ) : (
    <>
      {organisation.name} <code>{organisation.id}</code>{" "}
      <span class="hint">(you are not a member, so its page is not open to you)</span>
    </>
  );
}

/**
 * "Organisations": those the viewer belongs to, with their role, and the form that creates a new
 * one (the creator becomes its owner; a parent must be one the viewer administers).
 */
async function organisationList(c: UiContext, failure?: { problem: Problem; values: Record<string, string> }) {
  const viewer = c.get("viewer");
  const mine = await c.get("api").call<{ items: (OrganisationItem & { created_at: string })[] }>("/v1/organisations");
  const items = mine.ok ? mine.body.items : [];
  const names = new Map(items.map((o) => [o.id, o.name]));
  const parents = items.filter((o) => ADMINISTERS.has(o.role));
  const nameError = fieldError(failure?.problem, "name");
  const parentError = fieldError(failure?.problem, "parent_id");
  return c.html(
    <Layout title="Organisations" viewer={viewer}>
      <h1>Organisations</h1>
      {mine.ok ? null : <ProblemMessage problem={mine.problem} />}
      {items.length === 0 ? (
        <p>You are not a member of any organisation yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack" id="organisations">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Parent</th>
                <th scope="col">Your role</th>
              </tr>
            </thead>
            <tbody>
              {items.map((o) => (
                <tr>
                  <td data-label="Name">
                    <a href={organisationPath(o.id)}>{o.name}</a>
                  </td>
                  <td data-label="Id">
                    <code>{o.id}</code>
                  </td>
                  <td data-label="Parent">{o.parent_id ? (names.get(o.parent_id) ?? o.parent_id) : "none"}</td>
                  <td data-label="Your role">{o.role}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form method="post" action="/dashboard/organisations" class="panel" id="create-organisation">
        <h2>New organisation</h2>
        <p class="hint">
          You become its owner. Its name, and its parent if you choose one, are public: they appear in every passport
          record naming it.
        </p>
        <input type="hidden" name="csrf" value={viewer.csrf} />
        <label for="new-name">Name</label>
        <input
          id="new-name"
          name="name"
          required
          maxlength={200}
          value={failure?.values.name ?? ""}
          aria-invalid={nameError ? "true" : undefined}
          aria-describedby={nameError ? "new-name-error" : undefined}
        />
        <FieldError id="new-name-error" message={nameError} />
        <label for="new-parent">Parent organisation</label>
        <select
          id="new-parent"
          name="parent_id"
          aria-invalid={parentError ? "true" : undefined}
          aria-describedby={parentError ? "new-parent-error" : undefined}
        >
          <option value="">No parent</option>
          {parents.map((p) => (
            <option value={p.id} selected={failure?.values.parent_id === p.id}>
              {p.name} ({p.id})
            </option>
          ))}
        </select>
        <FieldError id="new-parent-error" message={parentError} />
        {failure ? <ProblemMessage problem={failure.problem} id="create-organisation-problem" /> : null}
        <p>
          <button type="submit">Create organisation</button>
        </p>
      </form>
    </Layout>,
    failure ? (failure.problem.status as 400) : 200,
  );
}

export const organisationListPages = new Hono<UiEnv>();

organisationListPages.get("/", (c) => organisationList(c));

organisationListPages.post("/", async (c) => {
  const form = await c.req.formData();
  const values = { name: String(form.get("name") ?? ""), parent_id: String(form.get("parent_id") ?? "") };
  const refused = await refuseForgedPost(c.get("session"), form);
  if (refused) {
    return organisationList(c, {
      problem: { type: `${PROBLEM_TYPE_BASE}forbidden`, title: "Form refused", status: 403, detail: refused },
      values,
    });
  }
  const created = await c.get("api").call<{ id: string }>("/v1/organisations", {
    method: "POST",
    body: { name: values.name.trim(), ...(values.parent_id ? { parent_id: values.parent_id } : {}) },
  });
  if (!created.ok) return organisationList(c, { problem: created.problem, values });
  return c.redirect(organisationPath(created.body.id, "?done=created"), 303);
});
