import { FieldError, fieldError, ProblemMessage } from "./layout.tsx";
import { Field, type FormContext } from "./passport-forms/parts.tsx";

const RELATIONSHIPS = [
  ["responsible", "Responsible for it"],
  ["operator", "Operates it (responsibility not stated here)"],
] as const;

/**
 * The passport's display name, its organisation's stated relationship to the object and a separate
 * operator organisation (spec 2.1, docs/record-format.md#operator). All three are public in the
 * record. `operators` are the organisations the viewer may name: those where they are at least an
 * editor, other than the passport's own.
 */
export function DetailsForm(props: { ctx: FormContext; operators: { id: string; name: string }[] }) {
  const { ctx } = props;
  const { passport } = ctx;
  const form = "details";
  const failure = ctx.failure?.form === form ? ctx.failure : undefined;
  const relationship = failure?.values?.relationship ?? passport.organisation.relationship;
  const operator = failure?.values?.operator_organisation_id ?? passport.operator?.id ?? "";
  const choices = [
    ...(passport.operator && !props.operators.some((o) => o.id === passport.operator?.id) ? [passport.operator] : []),
    ...props.operators,
  ];
  const operatorError = fieldError(failure?.problem, "operator_organisation_id");
  return (
    <form method="post" action={`/dashboard/passports/${passport.identity_id}/details`} id={form}>
      <fieldset>
        <legend>Name and organisations</legend>
        <input type="hidden" name="csrf" value={ctx.csrf} />
        <input type="hidden" name="record_version" value={String(passport.record_version)} />
        <Field
          form={form}
          name="display_name"
          label="Display name"
          value={passport.display_name ?? ""}
          failure={failure}
          hint="Public: a label for people, not an identity. Leave empty to publish no name."
        />
        <Field form={form} name="relationship" label={`${passport.organisation.name}'s relationship`} failure={failure}>
          <select id={`${form}-relationship`} name="relationship">
            {RELATIONSHIPS.map(([value, label]) => (
              <option value={value} selected={relationship === value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <label for={`${form}-operator_organisation_id`}>Operated by another organisation</label>
        <p class="hint" id={`${form}-operator_organisation_id-hint`}>
          Only while {passport.organisation.name} is responsible. You need the editor role in the operator, whose name
          is then published in the record.
        </p>
        <select
          id={`${form}-operator_organisation_id`}
          name="operator_organisation_id"
          aria-invalid={operatorError ? "true" : undefined}
          aria-describedby={[
            `${form}-operator_organisation_id-hint`,
            operatorError ? `${form}-operator_organisation_id-error` : "",
          ]
            .filter(Boolean)
            .join(" ")}
        >
          <option value="" selected={operator === ""}>
            No separate operator
          </option>
          {choices.map((o) => (
            <option value={o.id} selected={operator === o.id}>
              {o.name} ({o.id})
            </option>
          ))}
        </select>
        <FieldError id={`${form}-operator_organisation_id-error`} message={operatorError} />
        {failure ? <ProblemMessage problem={failure.problem} id={`${form}-problem`} /> : null}
        <p>
          <button type="submit">Save name and organisations</button>
        </p>
      </fieldset>
    </form>
  );
}
