import { allowedTransitions, BINDING_CLASSES_BY_FAMILY, type Problem } from "@passport/domain";
import type { Child } from "hono/jsx";
import type { PassportView } from "../api/views.ts";
import { BINDING_LABELS, TRANSITION_VERBS } from "./labels.ts";
import { FieldError, fieldError, formatTime, ProblemMessage } from "./layout.tsx";

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

/** An authority entry is expired once its `expires_at` has passed; it stays in the record as it was. */
export function authorityExpired(entry: { expires_at: string | null }, now: number): boolean {
  return entry.expires_at !== null && Date.parse(entry.expires_at) <= now;
}

export function AddAuthorityForm(props: { ctx: FormContext }) {
  const { ctx } = props;
  const form = "authority-add";
  const failure = failureFor(ctx, form);
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/authority`} id={form}>
      <fieldset>
        <legend>Add authority context</legend>
        <Hidden ctx={ctx} />
        <div class="row">
          <Field
            form={form}
            name="action"
            label="Action"
            failure={failure}
            required
            hint="The one action this context is for, e.g. payments.refund"
          />
          <div class="grow">
            <Field
              form={form}
              name="context"
              label="Context"
              failure={failure}
              required
              hint="Its limits in plain words, e.g. EU merchants only, up to 500 EUR"
            />
          </div>
        </div>
        <div class="row">
          <Field form={form} name="granted_by" label="Granted by (optional)" failure={failure} />
          <Field
            form={form}
            name="expires_at"
            label="Expires at (UTC, optional)"
            type="datetime-local"
            failure={failure}
          />
        </div>
        <p class="hint">
          Authority context is public in the resolver record and is never blanket permission: consumers evaluate it for
          the one action it names.
        </p>
        <FormProblem failure={failure} id={`${form}-problem`} />
        <p>
          <button type="submit">Add authority context</button>
        </p>
      </fieldset>
    </form>
  );
}

/** Expire keeps the entry in the record with the time it stopped applying; remove takes it out. */
export function AuthorityControls(props: { ctx: FormContext; entry: PassportView["authority"][number]; now: number }) {
  const { ctx, entry } = props;
  const base = `/dashboard/passports/${ctx.passport.identity_id}/authority/${entry.id}`;
  const expire = `authority-expire-${entry.id}`;
  const remove = `authority-remove-${entry.id}`;
  return (
    <div class="actions">
      {authorityExpired(entry, props.now) ? null : (
        <form method="post" action={`${base}/expire`} class="inline-form" id={expire}>
          <Hidden ctx={ctx} />
          <button type="submit" class="secondary small" aria-label={`Expire authority for ${entry.action} now`}>
            Expire now
          </button>
          <FormProblem failure={failureFor(ctx, expire)} id={`${expire}-problem`} />
        </form>
      )}
      <form method="post" action={`${base}/remove`} class="inline-form" id={remove}>
        <Hidden ctx={ctx} />
        <button type="submit" class="danger small" aria-label={`Remove authority for ${entry.action}`}>
          Remove
        </button>
        <FormProblem failure={failureFor(ctx, remove)} id={`${remove}-problem`} />
      </form>
    </div>
  );
}

/** The words for what each entry says about time, so state is never colour alone. */
export function authorityTime(entry: { expires_at: string | null }, now: number): string {
  if (!entry.expires_at) return "no expiry";
  return `${authorityExpired(entry, now) ? "expired" : "until"} ${formatTime(entry.expires_at)}`;
}

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
