// The forms that add and withdraw a passport's evidence.
import { Field, type FormContext, FormProblem, failureFor, Hidden } from "./parts.tsx";

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
