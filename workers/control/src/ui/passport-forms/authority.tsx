// The forms that add, expire and remove a passport's authority context.
import type { PassportView } from "../../api/views.ts";
import { formatTime } from "../layout.tsx";
import { Field, type FormContext, FormProblem, failureFor, Hidden } from "./parts.tsx";

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
