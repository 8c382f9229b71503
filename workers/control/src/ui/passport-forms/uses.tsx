// Agent uses links (docs/reciprocal-trust.md): the passports an agent declares it calls, and on the
// other side the agent passports that declare a passport. Links are context for policy; they grant nothing.
import type { z } from "zod";
import type { DeclarersPage, PassportView } from "../../api/views.ts";
import { Time } from "../layout.tsx";
import { Field, type FormContext, FormProblem, failureFor, Hidden } from "./parts.tsx";

type Declarers = z.infer<typeof DeclarersPage>;

/** The words shown beside a link whose other end is revoked or retired, so it is never colour alone. */
function Flag(props: { lifecycle: string | null; flagged: boolean }) {
  return props.flagged ? <span class="badge s-revoked">{props.lifecycle}: do not rely on this link</span> : null;
}

export function UsesSection(props: { ctx: FormContext; canEdit: boolean }) {
  const { ctx, canEdit } = props;
  const uses = ctx.passport.uses;
  return (
    <section aria-labelledby="uses-heading">
      <h3 id="uses-heading">Passports this agent uses</h3>
      {uses.length === 0 ? (
        <p>None declared. Declaring the API and MCP passports this agent calls lets their owners see it.</p>
      ) : (
        <ul class="bindings" id="uses-list">
          {uses.map((u) => (
            <li>
              <strong>{u.display_name ?? "Unnamed passport"}</strong> <code>{u.identity_id}</code>{" "}
              <span class="hint">
                · {u.family} · declared <Time at={u.declared_at} />
              </span>{" "}
              <Flag lifecycle={u.lifecycle} flagged={u.flagged} />
              {canEdit ? <RemoveUsesForm ctx={ctx} link={u} /> : null}
            </li>
          ))}
        </ul>
      )}
      {canEdit ? (
        <details class="disclosure" open={ctx.failure?.form === "uses-add"}>
          <summary>Declare a passport this agent uses</summary>
          <AddUsesForm ctx={ctx} />
        </details>
      ) : null}
    </section>
  );
}

function AddUsesForm(props: { ctx: FormContext }) {
  const { ctx } = props;
  const form = "uses-add";
  const failure = failureFor(ctx, form);
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/uses`} id={form}>
      <fieldset>
        <legend>Declare a passport this agent uses</legend>
        <Hidden ctx={ctx} />
        <Field
          form={form}
          name="identity_id"
          label="Identity id"
          failure={failure}
          required
          hint="The API or MCP passport's id (psp_…). Published in this agent's record; it grants nothing."
        />
        <FormProblem failure={failure} id={`${form}-problem`} />
        <p>
          <button type="submit">Declare use</button>
        </p>
      </fieldset>
    </form>
  );
}

function RemoveUsesForm(props: { ctx: FormContext; link: PassportView["uses"][number] }) {
  const { ctx, link } = props;
  const form = `uses-remove-${link.identity_id}`;
  return (
    <form
      method="post"
      action={`/dashboard/passports/${ctx.passport.identity_id}/uses/${link.identity_id}/remove`}
      class="inline-form"
      id={form}
    >
      <Hidden ctx={ctx} />
      <button type="submit" class="danger small" aria-label={`Stop declaring use of ${link.identity_id}`}>
        Remove
      </button>
      <FormProblem failure={failureFor(ctx, form)} id={`${form}-problem`} />
    </form>
  );
}

/** The agent passports that declare this passport: members of its organisation see who; the public sees a count. */
export function DeclarersSection(props: { declarers: Declarers }) {
  const { declarers } = props;
  return (
    <section aria-labelledby="declarers-heading">
      <h3 id="declarers-heading">Agents that declare they use this passport</h3>
      <p>
        <span id="declarer-count">{declarers.declared_by}</span> agent passport
        {declarers.declared_by === 1 ? "" : "s"}
        {declarers.flagged > 0 ? `, ${declarers.flagged} of them revoked or retired` : ""}. The public sees only this
        count.{" "}
        {declarers.target_flagged ? (
          <span class="badge s-revoked">This passport is revoked or retired: every link to it is flagged</span>
        ) : null}
      </p>
      {declarers.items.length > 0 ? (
        <ul class="bindings" id="declarers-list">
          {declarers.items.map((d) => (
            <li>
              <strong>{d.display_name ?? "Unnamed agent"}</strong> <code>{d.identity_id}</code>{" "}
              <span class="hint">
                · {d.organisation.name} · declared <Time at={d.declared_at} />
              </span>{" "}
              <Flag lifecycle={d.lifecycle} flagged={d.flagged} />
            </li>
          ))}
        </ul>
      ) : null}
      {declarers.next_cursor ? (
        <p class="hint">The first {declarers.items.length} are shown; the Dashboard API lists the rest.</p>
      ) : null}
    </section>
  );
}
