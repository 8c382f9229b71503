// The forms that change a passport's bindings.
import { BINDING_CLASSES_BY_FAMILY } from "@passport/domain";
import type { PassportView } from "../../api/views.ts";
import { BINDING_LABELS } from "../labels.ts";
import { Field, type FormContext, FormProblem, failureFor, Hidden, SelectField } from "./parts.tsx";

/** What a package binding's value is, and what its published metadata must say (docs/bindings.md, "Package ownership"). */
function PackageHelp(props: { identityId: string }) {
  const { identityId } = props;
  return (
    <details class="hint">
      <summary>Package bindings: what to put in your package's metadata</summary>
      <p>
        A package is proven by a back-reference to this passport in the metadata you publish with it; other registries
        stay claimed.
      </p>
      <ul>
        <li>
          npm: bind <code>pkg:npm/@scope/name</code> (optionally <code>@version</code>) or its npmjs.com page, and
          publish a version whose <code>package.json</code> has <code>{`"passport": "${identityId}"`}</code>.
        </li>
        <li>
          PyPI: bind <code>pkg:pypi/name</code> (optionally <code>@version</code>) or its pypi.org project page, and
          publish a release whose README has the line <code>{`passport: ${identityId}`}</code> (or{" "}
          <code>{`<!-- passport: ${identityId} -->`}</code> to hide it).
        </li>
      </ul>
      <p>Without a version the latest release is read, and re-read at every re-check.</p>
    </details>
  );
}

export function AddBindingForm(props: { ctx: FormContext }) {
  const { ctx } = props;
  const form = "binding-add";
  const failure = failureFor(ctx, form);
  const classes = BINDING_CLASSES_BY_FAMILY[ctx.passport.family];
  const chosen = failure?.values?.class;
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/bindings`} id={form}>
      <fieldset>
        <legend>Add a binding</legend>
        <Hidden ctx={ctx} />
        <div class="row">
          <SelectField
            form={form}
            name="class"
            label="Class"
            failure={failure}
            options={classes.map((cls) => [cls, BINDING_LABELS[cls]] as const)}
            chosen={chosen}
          />
          <div class="grow">
            <Field
              form={form}
              name="value"
              label="Value"
              failure={failure}
              required
              hint="A URL, id or name; never a secret."
            />
          </div>
          <Field form={form} name="label" label="Label (optional)" failure={failure} />
        </div>
        <FormProblem failure={failure} id={`${form}-problem`} />
        {classes.includes("package") ? <PackageHelp identityId={ctx.passport.identity_id} /> : null}
        <p>
          <button type="submit">Add binding</button>
        </p>
      </fieldset>
    </form>
  );
}

export function BindingControls(props: { ctx: FormContext; binding: PassportView["bindings"][number] }) {
  const { ctx, binding } = props;
  const replace = `binding-replace-${binding.id}`;
  const remove = `binding-remove-${binding.id}`;
  const replaceFailure = failureFor(ctx, replace);
  const removeFailure = failureFor(ctx, remove);
  const base = `/dashboard/passports/${ctx.passport.identity_id}/bindings/${binding.id}`;
  return (
    <div class="actions">
      <details open={Boolean(replaceFailure)}>
        <summary>Edit</summary>
        <form method="post" action={`${base}/replace`} id={replace}>
          <Hidden ctx={ctx} />
          <Field
            form={replace}
            name="value"
            label={`New value for this ${BINDING_LABELS[binding.class].toLowerCase()} binding`}
            value={binding.value}
            failure={replaceFailure}
            required
          />
          <FormProblem failure={replaceFailure} id={`${replace}-problem`} />
          <p>
            <button type="submit" class="small">
              Save binding
            </button>
          </p>
        </form>
      </details>
      <BindingContextForm ctx={ctx} binding={binding} />
      <form method="post" action={`${base}/remove`} class="inline-form" id={remove}>
        <Hidden ctx={ctx} />
        <button type="submit" class="danger small" aria-label={`Remove binding ${binding.value}`}>
          Remove
        </button>
        <FormProblem failure={removeFailure} id={`${remove}-problem`} />
      </form>
    </div>
  );
}

/**
 * The environment and version of this one bound value (a staging endpoint under a production
 * passport). Empty fields mean the passport's own state applies; they are claims, not proven by
 * the binding's check.
 */
function BindingContextForm(props: { ctx: FormContext; binding: PassportView["bindings"][number] }) {
  const { ctx, binding } = props;
  const form = `binding-context-${binding.id}`;
  const failure = failureFor(ctx, form);
  return (
    <details open={Boolean(failure)}>
      <summary>Environment and version</summary>
      <form
        method="post"
        action={`/dashboard/passports/${ctx.passport.identity_id}/bindings/${binding.id}/context`}
        id={form}
      >
        <Hidden ctx={ctx} />
        <div class="row">
          <Field
            form={form}
            name="environment"
            label={`Environment of ${binding.value}`}
            value={binding.environment ?? ""}
            failure={failure}
            hint="Empty: the passport's environment applies"
          />
          <Field
            form={form}
            name="version"
            label={`Version of ${binding.value}`}
            value={binding.version ?? ""}
            failure={failure}
          />
        </div>
        <FormProblem failure={failure} id={`${form}-problem`} />
        <p>
          <button type="submit" class="small">
            Save environment and version
          </button>
        </p>
      </form>
    </details>
  );
}
