// The forms that add, expire and remove a passport's authority context.
import { RATE_PERIODS } from "@passport/domain";
import type { PassportView } from "../../api/views.ts";
import { fieldError, formatTime } from "../layout.tsx";
import { Field, type FormContext, FormProblem, failureFor, Hidden, SelectField } from "./parts.tsx";

/** An authority entry is expired once its `expires_at` has passed; it stays in the record as it was. */
export function authorityExpired(entry: { expires_at: string | null }, now: number): boolean {
  return entry.expires_at !== null && Date.parse(entry.expires_at) <= now;
}

type AuthorityView = PassportView["authority"][number];

/** Who granted an entry, in words: the grantor the service checked, or the text typed on an old entry. */
export function grantorText(entry: AuthorityView, passport: PassportView): string | undefined {
  const grantor = entry.granted_by;
  if (grantor === null) return undefined;
  if (typeof grantor === "string") return `${grantor} (typed, not checked)`;
  const role = grantor.role ? ` ${grantor.role}` : "";
  if (grantor.relationship === "responsible") {
    return `${passport.organisation.id === grantor.id ? passport.organisation.name : grantor.id} (responsible organisation,${role || " member"})`;
  }
  if (grantor.relationship === "parent") {
    const name = passport.organisation.parent?.id === grantor.id ? passport.organisation.parent.name : grantor.id;
    return `${name} (parent organisation,${role || " member"})`;
  }
  return `passport ${grantor.id}`;
}

/** The scope and limits of a structured entry, in words. */
export function scopeText(entry: AuthorityView): string | undefined {
  const parts: string[] = [];
  if (entry.scope?.resource) parts.push(`on ${entry.scope.resource}`);
  const amount = entry.scope?.limits?.amount;
  if (amount) parts.push(`up to ${amount.value} ${amount.currency}`);
  const rate = entry.scope?.limits?.rate;
  if (rate) parts.push(`at most ${rate.count} per ${rate.per}`);
  return parts.length > 0 ? parts.join(", ") : undefined;
}

/**
 * Adds authority. With a grantor it is structured: the API checks the grantor against the
 * viewer's role (owner or admin of that organisation) and requires an end date. Without one it is
 * free-text context, which consumers never count as established.
 */
export function AddAuthorityForm(props: { ctx: FormContext; grantsAsOrganisation: boolean }) {
  const { ctx } = props;
  const { organisation } = ctx.passport;
  const form = "authority-add";
  const failure = failureFor(ctx, form);
  // Owners and admins grant as the organisation by default; an editor's default is free text.
  const chosen =
    failure?.values?.granted_by ?? (props.grantsAsOrganisation ? `organisation|responsible|${organisation.id}` : "");
  const chosenPer = failure?.values?.rate_per ?? "hour";
  const grantorError =
    fieldError(failure?.problem, "granted_by") ?? fieldError(failure?.problem, "granted_by.relationship");
  const options = [
    {
      value: `organisation|responsible|${organisation.id}`,
      label: `${organisation.name}, this passport's organisation (you must be owner or admin)`,
    },
    ...(organisation.parent
      ? [
          {
            value: `organisation|parent|${organisation.parent.id}`,
            label: `${organisation.parent.name}, its parent organisation (you must be owner or admin there)`,
          },
        ]
      : []),
    { value: "passport", label: `Another active passport of ${organisation.name} (named below)` },
    { value: "", label: "Nobody checked: free-text context only, never counted as authority" },
  ];
  return (
    <form method="post" action={`/dashboard/passports/${ctx.passport.identity_id}/authority`} id={form}>
      <fieldset>
        <legend>Add authority</legend>
        <Hidden ctx={ctx} />
        <div class="row">
          <Field
            form={form}
            name="action"
            label="Action"
            failure={failure}
            required
            hint="An action, e.g. payments.refund; or payments.* for every action under payments, or * for all"
          />
          <div class="grow">
            <Field form={form} name="granted_by" label="Granted by" failure={failure} path="granted_by">
              <select
                id={`${form}-granted_by`}
                name="granted_by"
                aria-invalid={grantorError ? "true" : undefined}
                aria-describedby={grantorError ? `${form}-granted_by-error` : undefined}
              >
                {options.map((option) => (
                  <option value={option.value} selected={chosen === option.value}>
                    {option.label}
                  </option>
                ))}
              </select>
            </Field>
          </div>
        </div>
        <div class="row">
          <Field
            form={form}
            name="granting_passport"
            path="granted_by.id"
            label="Granting passport (identity id, when granted by a passport)"
            failure={failure}
          />
          <Field
            form={form}
            name="expires_at"
            label="Until (UTC)"
            type="datetime-local"
            failure={failure}
            hint="Required when granted by an organisation or passport"
          />
        </div>
        <div class="row">
          <div class="grow">
            <Field
              form={form}
              name="resource"
              path="scope.resource"
              label="Resource (optional)"
              failure={failure}
              hint="What it applies to, e.g. org:acme/customers/*"
            />
          </div>
          <Field
            form={form}
            name="amount_value"
            path="scope.limits.amount.value"
            label="Amount limit (optional)"
            failure={failure}
            hint="Largest amount per action, e.g. 100.00"
          />
          <Field
            form={form}
            name="amount_currency"
            path="scope.limits.amount.currency"
            label="Currency"
            failure={failure}
            hint="ISO 4217, e.g. EUR"
          />
        </div>
        <div class="row">
          <Field
            form={form}
            name="rate_count"
            path="scope.limits.rate.count"
            label="Rate limit (optional): at most"
            type="number"
            failure={failure}
          />
          <SelectField
            form={form}
            name="rate_per"
            path="scope.limits.rate.per"
            label="actions per"
            failure={failure}
            options={RATE_PERIODS.map((period) => [period, period] as const)}
            chosen={chosenPer}
          />
          <div class="grow">
            <Field
              form={form}
              name="context"
              label="Context"
              failure={failure}
              hint="In plain words; required for free-text context, optional otherwise"
            />
          </div>
        </div>
        <p class="hint">
          Authority is public in the resolver record and is never blanket permission: consumers evaluate it for the
          action it names, within its limits, until its end. Who granted it is checked against your role when you add
          it.
        </p>
        <FormProblem failure={failure} id={`${form}-problem`} />
        <p>
          <button type="submit">Add authority</button>
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
