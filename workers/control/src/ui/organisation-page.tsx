import { PROBLEM_TYPE_BASE, type Problem } from "@passport/domain";
import { type Context, Hono } from "hono";
import type { z } from "zod";
import { roleAtLeast } from "../access/roles.ts";
import type { SubscriptionHistory as SubscriptionHistorySchema } from "../marketplace/index.ts";
import type { UiEnv } from "./context.ts";
import { historyLabel, historySummary } from "./labels.ts";
import { Layout, ProblemMessage, Time } from "./layout.tsx";
import { OrganisationName, organisationPath } from "./organisation-list.tsx";
import { refuseForgedPost } from "./session.ts";

type UiContext = Context<UiEnv>;

/** What GET /v1/organisations/{id} answers (routes/organisations.ts). */
interface OrganisationView {
  id: string;
  name: string;
  parent: { id: string; name: string } | null;
  role: "owner" | "admin" | "editor" | "viewer";
  /** Set for the owner an operator recovered, for a while after (spec 5.2; api/after-recovery.ts). */
  after_recovery: AfterRecoveryView | null;
  members: { subject: string; role: string; since: string }[];
  children: { id: string; name: string }[];
  history: { kind: string; actor: string; at: string; detail: Record<string, unknown> }[];
  subscriptions: {
    product_code: string | null;
    license_arn: string | null;
    aws_account_id: string | null;
    status: string;
    status_at: string;
    last_event: string | null;
    since: string;
  }[];
}

interface AfterRecoveryView {
  recovered_at: string;
  steps: string[];
  passports: {
    identity_id: string;
    display_name: string | null;
    lifecycle: string;
    dashboard_url: string;
    resolver_url: string;
    machine_json_url: string;
  }[];
  more_passports: boolean;
}

/**
 * After an owner recovery (spec 5.2): what the recovered owner confirms in the Dashboard, and the
 * Resolver links to re-check each passport.
 */
function AfterRecoveryNotice(props: { recovery: AfterRecoveryView }) {
  const { recovery } = props;
  return (
    <section class="notice" id="after-recovery" aria-labelledby="after-recovery-heading">
      <h2 id="after-recovery-heading">You were made owner by a recovery</h2>
      <p>
        The recovery on <Time at={recovery.recovered_at} /> changed nothing else. Before relying on this estate:
      </p>
      <ol>
        {recovery.steps.map((step) => (
          <li>{step}</li>
        ))}
      </ol>
      {recovery.passports.length > 0 ? (
        <ul id="after-recovery-passports">
          {recovery.passports.map((p) => (
            <li>
              <a href={p.dashboard_url}>{p.display_name ?? p.identity_id}</a> <code>{p.identity_id}</code> (
              {p.lifecycle}): <a href={p.resolver_url}>re-check in the Resolver</a>,{" "}
              <a href={p.machine_json_url}>machine JSON</a>
            </li>
          ))}
        </ul>
      ) : (
        <p>This organisation holds no passports.</p>
      )}
      {recovery.more_passports ? (
        <p>
          More passports: see <a href="/dashboard/passports">the passport list</a>.
        </p>
      ) : null}
    </section>
  );
}

/** What GET /v1/organisations/{id}/subscriptions answers. */
type SubscriptionHistory = z.infer<typeof SubscriptionHistorySchema>;

interface OrganisationItem {
  id: string;
  name: string;
  role: string;
}

/** The names marketplace set-up gives the organisations it makes; public, so the customer should replace them. */
const NEUTRAL_NAMES = new Set(["Marketplace account", "Marketplace customer"]);

/**
 * One organisation: who it says it is (name and parent, published in every record that names it),
 * its children, members and history. Admins rename it and choose its parent among the
 * organisations they administer.
 */
async function organisationPage(
  c: UiContext,
  id: string,
  failure?: { problem: Problem; values: Record<string, string>; form?: string },
) {
  const viewer = c.get("viewer");
  if (!viewer) return c.redirect("/dashboard/sign-in", 303);
  const api = c.get("api");
  const found = await api.call<OrganisationView>(`/v1/organisations/${encodeURIComponent(id)}`);
  if (!found.ok) {
    return c.html(
      <Layout title="Organisation not found" viewer={viewer}>
        <h1>Organisation not found</h1>
        <ProblemMessage problem={found.problem} />
      </Layout>,
      found.problem.status as 404,
    );
  }
  const organisation = found.body;
  const products = await api.call<SubscriptionHistory>(`/v1/organisations/${encodeURIComponent(id)}/subscriptions`);
  const canEdit = roleAtLeast(organisation.role, "admin");
  const mine = await api.call<{ items: OrganisationItem[] }>("/v1/organisations");
  // Only organisations the viewer belongs to get a link: the API answers any other with 404.
  const memberOf = new Set((mine.ok ? mine.body.items : []).map((o) => o.id));
  const parents = (canEdit && mine.ok ? mine.body.items : []).filter(
    (o) =>
      roleAtLeast(o.role, "admin") && o.id !== organisation.id && !organisation.children.some((ch) => ch.id === o.id),
  );
  const done = c.req.query("done");
  const prompt = canEdit && NEUTRAL_NAMES.has(organisation.name);
  const name = failure?.values.name ?? organisation.name;
  const parent = failure?.values.parent_id ?? organisation.parent?.id ?? "";

  return c.html(
    <Layout title={organisation.name} viewer={viewer}>
      <p>
        <a href="/dashboard/organisations">← All organisations</a>
      </p>
      <h1>{organisation.name}</h1>
      {organisation.after_recovery ? <AfterRecoveryNotice recovery={organisation.after_recovery} /> : null}
      {done === "created" ? (
        <p class="notice" role="status">
          Organisation created; you are its owner.
        </p>
      ) : null}
      {done === "members" ? (
        <p class="notice" role="status">
          Members updated.
        </p>
      ) : null}
      {done === "saved" ? (
        <p class="notice" role="status">
          Saved. Every passport record naming this organisation now carries the change; the first 20 are published now
          and the rest at about 200 a minute, and resolvers in every location serve each within about a minute of its
          publication (2 minutes at the latest).
        </p>
      ) : null}
      <dl class="facts">
        <dt>Organisation id</dt>
        <dd>
          <code>{organisation.id}</code>
        </dd>
        <dt>Parent</dt>
        <dd>
          {organisation.parent ? <OrganisationName organisation={organisation.parent} memberOf={memberOf} /> : "none"}
        </dd>
        <dt>Your role</dt>
        <dd>{organisation.role}</dd>
      </dl>
      {canEdit ? (
        <form method="post" action={organisationPath(organisation.id)} class="panel" id="organisation-form">
          <h2>Who this organisation says it is</h2>
          {prompt ? (
            <p class="notice" id="name-prompt">
              Marketplace set-up gave this organisation a neutral name. Name it as consumers should know you: the name
              is published in every passport record it is responsible for.
            </p>
          ) : (
            <p class="hint">The name and parent are public: they appear in every passport record naming them.</p>
          )}
          <input type="hidden" name="csrf" value={viewer.csrf} />
          <label for="name">Name</label>
          <input id="name" name="name" value={name} required maxlength={200} />
          <label for="parent_id">Parent organisation</label>
          <select id="parent_id" name="parent_id">
            <option value="" selected={parent === ""}>
              No parent
            </option>
            {organisation.parent && !parents.some((p) => p.id === organisation.parent?.id) ? (
              <option value={organisation.parent.id} selected={parent === organisation.parent.id}>
                {organisation.parent.name}
              </option>
            ) : null}
            {parents.map((p) => (
              <option value={p.id} selected={parent === p.id}>
                {p.name} ({p.id})
              </option>
            ))}
          </select>
          <label for="reason">Reason (kept in the history)</label>
          <input id="reason" name="reason" value={failure?.values.reason ?? ""} maxlength={1000} />
          {failure && !failure.form ? <ProblemMessage problem={failure.problem} id="organisation-problem" /> : null}
          <p>
            <button type="submit">Save</button>
          </p>
        </form>
      ) : null}
      <section class="panel" aria-labelledby="children-heading">
        <h2 id="children-heading">Child organisations</h2>
        {organisation.children.length === 0 ? (
          <p>None.</p>
        ) : (
          <ul id="children">
            {organisation.children.map((child) => (
              <li>
                <OrganisationName organisation={child} memberOf={memberOf} />
                {memberOf.has(child.id) ? (
                  <>
                    {" "}
                    <code>{child.id}</code>
                  </>
                ) : null}
              </li>
            ))}
          </ul>
        )}
        <p>
          <a href={`/dashboard/passports?organisation=${encodeURIComponent(organisation.id)}`}>
            This organisation's passports
          </a>
          {roleAtLeast(organisation.role, "editor") ? (
            <>
              {" · "}
              <a href={`/dashboard/passports/new?organisation=${encodeURIComponent(organisation.id)}`}>
                New passport here
              </a>
            </>
          ) : null}
        </p>
      </section>
      {products.ok ? (
        <ProductsSection history={products.body} />
      ) : (
        <section class="panel" id="subscriptions">
          <h2>Products and entitlements</h2>
          <ProblemMessage problem={products.problem} />
        </section>
      )}
      <MembersSection organisation={organisation} csrf={viewer.csrf} failure={failure} />
      <section class="panel" aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        {organisation.history.length === 0 ? (
          <p>No changes yet.</p>
        ) : (
          <ol class="history" id="organisation-history">
            {organisation.history.map((e) => (
              <li>
                <strong>{historyLabel(e.kind)}</strong> {historySummary(e.detail)} by <code>{e.actor}</code>,{" "}
                <Time at={e.at} />
              </li>
            ))}
          </ol>
        )}
      </section>
    </Layout>,
    failure ? (failure.problem.status as 400) : 200,
  );
}

/** The entitlement words the marketplace events map to (docs/acquisition.md), said plainly. */
const STATUS_WORDS: Record<string, string> = {
  active: "active",
  unsubscribe_pending: "ending (unsubscribe pending)",
  ended: "ended",
  deprovisioned: "deprovisioned",
  failed: "failed",
};

/**
 * Products and entitlements (spec 4.4): each marketplace subscription with its current status and
 * the events that set it, newest first, then each set-up (acquisition) with its stages, activation
 * among them. Ended subscriptions stay listed: an ended entitlement never removes an identity.
 */
function ProductsSection(props: { history: SubscriptionHistory }) {
  const { subscriptions, acquisitions } = props.history;
  return (
    <section class="panel" aria-labelledby="subscriptions-heading" id="subscriptions">
      <h2 id="subscriptions-heading">Products and entitlements</h2>
      {subscriptions.length === 0 ? (
        <p>No marketplace subscriptions are held through this organisation.</p>
      ) : (
        subscriptions.map((s, index) => (
          <article class="subscription" aria-labelledby={`subscription-${index}`}>
            <h3 id={`subscription-${index}`}>
              <code>{s.product_code ?? "unknown product"}</code>{" "}
              <span class={`badge m-${s.status}`}>{STATUS_WORDS[s.status] ?? s.status}</span>
            </h3>
            <dl class="facts">
              <dt>Cloud account</dt>
              <dd>
                <code>{s.aws_account_id ?? "unknown"}</code>
              </dd>
              {s.agreement_id ? (
                <>
                  <dt>Agreement</dt>
                  <dd>
                    <code>{s.agreement_id}</code>
                  </dd>
                </>
              ) : null}
              <dt>Status as of</dt>
              <dd>
                <Time at={s.status_at} />
              </dd>
              <dt>Subscribed</dt>
              <dd>
                <Time at={s.since} />
              </dd>
            </dl>
            <h4>Subscription events</h4>
            {s.events.length === 0 ? (
              <p class="hint">No events from the marketplace since set-up.</p>
            ) : (
              <ol class="history subscription-events">
                {s.events.map((e) => (
                  <li>
                    <strong>{e.kind}</strong> <Time at={e.occurred_at} />
                    {e.outcome === "applied" ? null : <span class="hint"> · recorded, status unchanged</span>}
                  </li>
                ))}
              </ol>
            )}
          </article>
        ))
      )}
      {acquisitions.length > 0 ? (
        <>
          <h3>Set-up through the marketplace</h3>
          <div class="table-wrap">
            <table class="stack" id="acquisitions">
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Product</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Stages</th>
                </tr>
              </thead>
              <tbody>
                {acquisitions.map((a) => (
                  <tr>
                    <td data-label="Started">
                      <Time at={a.created_at} />
                    </td>
                    <td data-label="Product">
                      <code>{a.product_code ?? "unknown"}</code>
                    </td>
                    <td data-label="Outcome">
                      <a href={`/dashboard/onboarding?acquisition=${encodeURIComponent(a.acquisition_id)}`}>
                        {a.status}
                      </a>
                    </td>
                    <td data-label="Stages">
                      <ul class="stage-list">
                        {a.stages.map((stage) => (
                          <li>
                            {stage.label}: {stage.status}
                            {stage.attempts > 1 ? ` after ${stage.attempts} attempts` : ""}
                          </li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </section>
  );
}

const ROLES = ["owner", "admin", "editor", "viewer"] as const;

/** What a role may do, in the words docs/roles.md uses. */
const ROLE_HINT =
  "Viewers read; editors edit passports; admins change lifecycle, members and the organisation; owners also grant the owner role. An organisation always keeps at least one owner: the last owner cannot be removed or demoted until another owner is added.";

/**
 * Members and roles. Admins add a member by identity-provider subject, change roles and remove
 * members; only owners see the owner role offered (the API refuses it to admins anyway).
 */
function MembersSection(props: {
  organisation: OrganisationView;
  csrf: string;
  failure?: { problem: Problem; values: Record<string, string>; form?: string };
}) {
  const { organisation, csrf, failure } = props;
  const canManage = roleAtLeast(organisation.role, "admin");
  const grantable = ROLES.filter((r) => r !== "owner" || organisation.role === "owner");
  const base = organisationPath(organisation.id);
  const problemFor = (form: string) =>
    failure?.form === form ? <ProblemMessage problem={failure.problem} id="members-problem" /> : null;
  return (
    <section class="panel" aria-labelledby="members-heading" id="members">
      <h2 id="members-heading">Members</h2>
      <p class="hint" id="role-hint">
        {ROLE_HINT}
      </p>
      {problemFor("members")}
      <table>
        <thead>
          <tr>
            <th scope="col">Subject</th>
            <th scope="col">Role</th>
            <th scope="col">Since</th>
            {canManage ? <th scope="col">Change</th> : null}
          </tr>
        </thead>
        <tbody>
          {organisation.members.map((m) => (
            <tr>
              <td>
                <code>{m.subject}</code>
              </td>
              <td>{m.role}</td>
              <td>
                <Time at={m.since} />
              </td>
              {canManage ? (
                <td>
                  <form method="post" action={`${base}/members`} class="row">
                    <input type="hidden" name="csrf" value={csrf} />
                    <input type="hidden" name="subject" value={m.subject} />
                    <div>
                      <label for={`role-${m.subject}`}>Role of {m.subject}</label>
                      <select id={`role-${m.subject}`} name="role">
                        {grantable.map((r) => (
                          <option value={r} selected={r === m.role}>
                            {r}
                          </option>
                        ))}
                      </select>
                    </div>
                    <div>
                      <button type="submit" class="secondary small" name="action" value="role">
                        Change role
                      </button>{" "}
                      <button type="submit" class="danger small" name="action" value="remove">
                        Remove
                      </button>
                    </div>
                  </form>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
      {canManage ? (
        <form method="post" action={`${base}/members`} id="add-member">
          <h3>Add a member</h3>
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="action" value="add" />
          <label for="new-subject">Subject (from the identity provider)</label>
          <input id="new-subject" name="subject" required maxlength={256} value={failure?.values.subject ?? ""} />
          <label for="new-role">Role</label>
          <select id="new-role" name="role">
            {grantable.map((r) => (
              <option value={r} selected={r === "viewer"}>
                {r}
              </option>
            ))}
          </select>
          <p>
            <button type="submit">Add member</button>
          </p>
        </form>
      ) : null}
    </section>
  );
}

export const organisationPages = new Hono<UiEnv>();

organisationPages.get("/:id", (c) => organisationPage(c, c.req.param("id")));

organisationPages.post("/:id", async (c) => {
  const id = c.req.param("id");
  const form = await c.req.formData();
  const values: Record<string, string> = {};
  for (const key of ["name", "parent_id", "reason"]) values[key] = String(form.get(key) ?? "");
  const refused = await refuseForgedPost(c.get("session"), form);
  if (refused) {
    return organisationPage(c, id, {
      problem: { type: `${PROBLEM_TYPE_BASE}forbidden`, title: "Form refused", status: 403, detail: refused },
      values,
    });
  }
  const saved = await c.get("api").call<OrganisationView>(`/v1/organisations/${encodeURIComponent(id)}`, {
    method: "PATCH",
    body: {
      name: values.name?.trim(),
      parent_id: values.parent_id ? values.parent_id : null,
      ...(values.reason?.trim() ? { reason: values.reason.trim() } : {}),
    },
  });
  if (!saved.ok) return organisationPage(c, id, { problem: saved.problem, values });
  return c.redirect(organisationPath(id, "?done=saved"), 303);
});

organisationPages.post("/:id/members", async (c) => {
  const id = c.req.param("id");
  const form = await c.req.formData();
  const values: Record<string, string> = {};
  for (const key of ["subject", "role", "action"]) values[key] = String(form.get(key) ?? "").trim();
  const refused = await refuseForgedPost(c.get("session"), form);
  if (refused) {
    return organisationPage(c, id, {
      problem: { type: `${PROBLEM_TYPE_BASE}forbidden`, title: "Form refused", status: 403, detail: refused },
      values,
      form: "members",
    });
  }
  const path = `/v1/organisations/${encodeURIComponent(id)}/members/${encodeURIComponent(values.subject ?? "")}`;
  const result =
    values.action === "remove"
      ? await c.get("api").call(path, { method: "DELETE" })
      : await c.get("api").call(path, { method: "PUT", body: { role: values.role } });
  if (!result.ok) return organisationPage(c, id, { problem: result.problem, values, form: "members" });
  return c.redirect(organisationPath(id, "?done=members#members"), 303);
});
