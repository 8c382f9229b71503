// The forms that change a passport's lifecycle and state: status, environment and version,
// re-check, and retirement as a duplicate.
import { allowedTransitions } from "@passport/domain";
import { TRANSITION_VERBS } from "../labels.ts";
import { fieldError } from "../layout.tsx";
import { Field, type FormContext, FormProblem, failureFor, Hidden } from "./parts.tsx";

/** Lifecycle buttons: only the transitions the current status allows (docs/lifecycle.md). */
export function LifecycleForm(props: { ctx: FormContext }) {
  const { ctx } = props;
  const form = "lifecycle";
  const failure = failureFor(ctx, form);
  const allowed = allowedTransitions(ctx.passport.state.lifecycle);
  if (allowed.length === 0) return null;
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/lifecycle`} id={form}>
      <fieldset>
        <legend>Change lifecycle</legend>
        <Hidden ctx={ctx} />
        <div class="row">
          <div class="grow">
            <Field
              form={form}
              name="reason"
              label="Reason (recorded in the history)"
              failure={failure}
              hint="Revocation and retirement are final: a revoked passport can only be retired; a retired one never changes."
            />
          </div>
          <p class="actions">
            {allowed.map((to) => (
              <button
                type="submit"
                name="lifecycle"
                value={to}
                class={to === "active" ? undefined : to === "suspended" ? "secondary" : "danger"}
              >
                {TRANSITION_VERBS[to]}
              </button>
            ))}
          </p>
        </div>
        <FormProblem failure={failure} id={`${form}-problem`} />
      </fieldset>
    </form>
  );
}

export function StateContextForm(props: { ctx: FormContext }) {
  const { ctx } = props;
  const form = "state";
  const failure = failureFor(ctx, form);
  const { state } = ctx.passport;
  const availability = failure?.values?.availability ?? state.availability ?? "";
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/state`} id={form}>
      <fieldset>
        <legend>Environment, version and availability</legend>
        <Hidden ctx={ctx} />
        <div class="row">
          <Field form={form} name="environment" label="Environment" value={state.environment ?? ""} failure={failure} />
          <Field form={form} name="version" label="Version" value={state.version ?? ""} failure={failure} />
          <Field form={form} name="availability" label="Availability" failure={failure}>
            <select id={`${form}-availability`} name="availability">
              {[
                ["", "Not stated"],
                ["available", "available"],
                ["degraded", "degraded"],
                ["unavailable", "unavailable"],
              ].map(([value, text]) => (
                <option value={value} selected={availability === value}>
                  {text}
                </option>
              ))}
            </select>
          </Field>
        </div>
        <FormProblem failure={failure} id={`${form}-problem`} />
        <p>
          <button type="submit">Save state</button>
        </p>
      </fieldset>
    </form>
  );
}

export function RecheckForm(props: { ctx: FormContext }) {
  const { ctx } = props;
  const failure = failureFor(ctx, "recheck");
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/recheck`} id="recheck">
      <Hidden ctx={ctx} />
      <FormProblem failure={failure} id="recheck-problem" />
      <button type="submit">Re-check now</button>
    </form>
  );
}

/** Marking this passport a duplicate retires it and points consumers at the surviving one (spec 1.6). */
export function DuplicateForm(props: {
  ctx: FormContext;
  suggestions: { identity_id: string; display_name: string | null }[];
}) {
  const { ctx, suggestions } = props;
  const form = "duplicate";
  const failure = failureFor(ctx, form);
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/duplicate`} id={form}>
      <fieldset>
        <legend>Mark as a duplicate</legend>
        <p class="hint">
          When another passport identifies the same object, this one is retired for good and its record points to the
          survivor, which must be an operative {ctx.passport.family} passport you can see. Needs the admin role.
        </p>
        <Hidden ctx={ctx} />
        <Field
          form={form}
          name="survivor_id"
          label="Identity id of the surviving passport"
          failure={failure}
          hint="psp_ followed by 26 characters; active passports of this organisation are suggested as you type"
        >
          <input
            id={`${form}-survivor_id`}
            name="survivor_id"
            value={failure?.values?.survivor_id ?? ""}
            required
            list={`${form}-survivors`}
            aria-invalid={fieldError(failure?.problem, "survivor_id") ? "true" : undefined}
            aria-describedby={[
              `${form}-survivor_id-hint`,
              fieldError(failure?.problem, "survivor_id") ? `${form}-survivor_id-error` : "",
            ]
              .filter(Boolean)
              .join(" ")}
            autocomplete="off"
          />
          <datalist id={`${form}-survivors`}>
            {suggestions.map((p) => (
              <option value={p.identity_id}>{p.display_name ?? "Unnamed passport"}</option>
            ))}
          </datalist>
        </Field>
        <Field form={form} name="reason" label="Reason (public in the history)" failure={failure} required />
        <FormProblem failure={failure} id={`${form}-problem`} />
        <p>
          <button type="submit" class="danger">
            Retire as a duplicate
          </button>
        </p>
      </fieldset>
    </form>
  );
}
