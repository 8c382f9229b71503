import { allowedTransitions, BINDING_CLASSES_BY_FAMILY, type Problem } from "@passport/domain";
import type { Child } from "hono/jsx";
import type { PassportView } from "../api/views.ts";
import { BINDING_LABELS, TRANSITION_VERBS } from "./labels.ts";
import { FieldError, fieldError, ProblemMessage } from "./layout.tsx";

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

function failureFor(ctx: FormContext, form: string): Failure | undefined {
  return ctx.failure?.form === form ? ctx.failure : undefined;
}

/** Every form carries the synchronizer token and the record version it was rendered from (If-Match). */
function Hidden(props: { ctx: FormContext }) {
  return (
    <>
      <input type="hidden" name="csrf" value={props.ctx.csrf} />
      <input type="hidden" name="record_version" value={String(props.ctx.passport.record_version)} />
    </>
  );
}

/** A labelled input whose API problem (by field path) is shown beneath it and announced with it. */
function Field(props: {
  form: string;
  name: string;
  label: string;
  failure?: Failure;
  value?: string;
  hint?: string;
  type?: string;
  required?: boolean;
  children?: Child;
}) {
  const id = `${props.form}-${props.name}`;
  const message = fieldError(props.failure?.problem, props.name);
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

/** The problem of a failed form, unless every part of it is already shown beside its field. */
function FormProblem(props: { failure?: Failure; id: string }) {
  return props.failure ? <ProblemMessage problem={props.failure.problem} id={props.id} /> : null;
}

export function AddBindingForm(props: { ctx: FormContext }) {
  const { ctx } = props;
  const form = "binding-add";
  const failure = failureFor(ctx, form);
  const classes = BINDING_CLASSES_BY_FAMILY[ctx.passport.family];
  const chosen = failure?.values?.class;
  const classError = fieldError(failure?.problem, "class");
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/bindings`} id={form}>
      <fieldset>
        <legend>Add a binding</legend>
        <Hidden ctx={ctx} />
        <div class="row">
          <Field form={form} name="class" label="Class" failure={failure}>
            <select
              id={`${form}-class`}
              name="class"
              aria-invalid={classError ? "true" : undefined}
              aria-describedby={classError ? `${form}-class-error` : undefined}
            >
              {classes.map((cls) => (
                <option value={cls} selected={chosen === cls}>
                  {BINDING_LABELS[cls]}
                </option>
              ))}
            </select>
          </Field>
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

function utcNow(): string {
  return new Date().toISOString().slice(0, 16);
}

export function AddEvidenceForm(props: { ctx: FormContext }) {
  const { ctx } = props;
  const form = "evidence-add";
  const failure = failureFor(ctx, form);
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/evidence`} id={form}>
      <fieldset>
        <legend>Add evidence</legend>
        <Hidden ctx={ctx} />
        <div class="row">
          <Field
            form={form}
            name="claim"
            label="Claim it supports"
            failure={failure}
            required
            hint="e.g. organisation, endpoint-control"
          />
          <Field form={form} name="source" label="Source" failure={failure} required hint="Who or what observed it" />
          <Field form={form} name="scope" label="Scope" failure={failure} required hint="What exactly it covers" />
        </div>
        <div class="row">
          <div class="grow">
            <Field form={form} name="reference" label="Reference URL (optional)" type="url" failure={failure} />
          </div>
          <Field
            form={form}
            name="observed_at"
            label="Observed at (UTC)"
            type="datetime-local"
            value={utcNow()}
            failure={failure}
            required
          />
          <Field
            form={form}
            name="fresh_until"
            label="Fresh until (UTC, optional)"
            type="datetime-local"
            failure={failure}
          />
        </div>
        <p class="hint">
          Evidence is public in the resolver record: never put credentials, tokens or private data in it.
        </p>
        <FormProblem failure={failure} id={`${form}-problem`} />
        <p>
          <button type="submit">Add evidence</button>
        </p>
      </fieldset>
    </form>
  );
}

export function WithdrawEvidenceForm(props: { ctx: FormContext; evidenceId: string; claim: string }) {
  const { ctx } = props;
  const form = `evidence-withdraw-${props.evidenceId}`;
  return (
    <form
      method="post"
      action={`/dashboard/passports/${ctx.passport.identity_id}/evidence/${props.evidenceId}/withdraw`}
      class="inline-form"
      id={form}
    >
      <Hidden ctx={ctx} />
      <button type="submit" class="danger small" aria-label={`Withdraw evidence for ${props.claim}`}>
        Withdraw
      </button>
      <FormProblem failure={failureFor(ctx, form)} id={`${form}-problem`} />
    </form>
  );
}

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
        <Field
          form={form}
          name="reason"
          label="Reason (recorded in the history)"
          failure={failure}
          hint="Revocation and retirement are final: a revoked passport can only be retired; a retired one never changes."
        />
        <FormProblem failure={failure} id={`${form}-problem`} />
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
      <button type="submit">I re-checked the bindings and evidence</button>
    </form>
  );
}
