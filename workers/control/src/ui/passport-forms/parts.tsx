// What every passport form shares: the failure it shows, its hidden fields and its labelled inputs.
import type { Problem } from "@passport/domain";
import type { Child } from "hono/jsx";
import type { PassportView } from "../../api/views.ts";
import { FieldError, fieldError, ProblemMessage } from "../layout.tsx";

/** A form that failed, with the API's problem and what the user had entered. */
export interface Failure {
  form: string;
  problem: Problem;
  values?: Record<string, string>;
}

export interface FormContext {
  passport: PassportView;
  csrf: string;
  failure?: Failure;
}

export function failureFor(ctx: FormContext, form: string): Failure | undefined {
  return ctx.failure?.form === form ? ctx.failure : undefined;
}

/** Every form carries the synchronizer token and the record version it was rendered from (If-Match). */
export function Hidden(props: { ctx: FormContext }) {
  return (
    <>
      <input type="hidden" name="csrf" value={props.ctx.csrf} />
      <input type="hidden" name="record_version" value={String(props.ctx.passport.record_version)} />
    </>
  );
}

/** A labelled input whose API problem (by field path) is shown beneath it and announced with it. */
export function Field(props: {
  form: string;
  name: string;
  /** The API's path for this field's errors, when it differs from the form field's name. */
  path?: string;
  label: string;
  failure?: Failure;
  value?: string;
  hint?: string;
  type?: string;
  required?: boolean;
  children?: Child;
}) {
  const id = `${props.form}-${props.name}`;
  const message = fieldError(props.failure?.problem, props.path ?? props.name);
  const described = [props.hint ? `${id}-hint` : "", message ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div>
      <label for={id}>{props.label}</label>
      {props.hint ? (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.children ?? (
        <input
          id={id}
          name={props.name}
          type={props.type ?? "text"}
          value={props.failure?.values?.[props.name] ?? props.value ?? ""}
          required={props.required}
          aria-invalid={message ? "true" : undefined}
          aria-describedby={described || undefined}
          autocomplete="off"
        />
      )}
      <FieldError id={`${id}-error`} message={message} />
    </div>
  );
}

/**
 * A labelled select of `options` ([value, text] pairs), `chosen` selected, whose API problem (by
 * field path) is shown beneath it and announced with it, as `Field` does for an input.
 */
export function SelectField(props: {
  form: string;
  name: string;
  /** The API's path for this field's errors, when it differs from the form field's name. */
  path?: string;
  label: string;
  failure?: Failure;
  options: readonly (readonly [string, string])[];
  chosen?: string;
}) {
  const id = `${props.form}-${props.name}`;
  const message = fieldError(props.failure?.problem, props.path ?? props.name);
  return (
    <Field form={props.form} name={props.name} path={props.path} label={props.label} failure={props.failure}>
      <select
        id={id}
        name={props.name}
        aria-invalid={message ? "true" : undefined}
        aria-describedby={message ? `${id}-error` : undefined}
      >
        {props.options.map(([value, text]) => (
          <option value={value} selected={props.chosen === value}>
            {text}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** The problem of a failed form, unless every part of it is already shown beside its field. */
export function FormProblem(props: { failure?: Failure; id: string }) {
  return props.failure ? <ProblemMessage problem={props.failure.problem} id={props.id} /> : null;
}
