// The form that moves a passport's responsibility to another organisation.
import { fieldError } from "../layout.tsx";
import { Field, type FormContext, FormProblem, failureFor, Hidden } from "./parts.tsx";

/**
 * Moving responsibility to another organisation. The API needs the owner role in both, so the
 * form offers only organisations the viewer owns and says why others are missing.
 */
export function TransferForm(props: { ctx: FormContext; targets: { id: string; name: string }[] }) {
  const { ctx, targets } = props;
  const form = "transfer";
  const failure = failureFor(ctx, form);
  const chosen = failure?.values?.organisation_id;
  const orgError = fieldError(failure?.problem, "organisation_id");
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/transfer`} id={form}>
      <fieldset>
        <legend>Move responsibility to another organisation</legend>
        <p class="hint" id={`${form}-roles`}>
          Needs the owner role here and in the receiving organisation. The identity id, bindings, evidence and history
          stay; the record then names the new organisation, and its members take over.
        </p>
        {targets.length === 0 ? (
          <p>You own no other organisation. Ask an owner of the receiving organisation to make you an owner there.</p>
        ) : (
          <>
            <Hidden ctx={ctx} />
            <Field form={form} name="organisation_id" label="Receiving organisation" failure={failure}>
              <select
                id={`${form}-organisation_id`}
                name="organisation_id"
                aria-invalid={orgError ? "true" : undefined}
                aria-describedby={orgError ? `${form}-organisation_id-error` : `${form}-roles`}
              >
                {targets.map((o) => (
                  <option value={o.id} selected={chosen === o.id}>
                    {o.name} ({o.id})
                  </option>
                ))}
              </select>
            </Field>
            <Field
              form={form}
              name="reason"
              label="Reason (public in the history)"
              failure={failure}
              required
              hint="e.g. the payments team moved to the platform organisation"
            />
            <FormProblem failure={failure} id={`${form}-problem`} />
            <p>
              <button type="submit" class="secondary">
                Move responsibility
              </button>
            </p>
          </>
        )}
      </fieldset>
    </form>
  );
}
