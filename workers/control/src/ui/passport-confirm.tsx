import { PROBLEM_TYPE_BASE, type Problem } from "@passport/domain";
import type { Context } from "hono";
import type { PassportView } from "../api/views.ts";
import type { UiEnv } from "./context.ts";
import { FieldError, fieldError, Layout, ProblemMessage } from "./layout.tsx";

type UiContext = Context<UiEnv>;

/** The changes that cannot be undone (docs/lifecycle.md): each needs a confirmation step and a reason. */
export type FinalChange = "revoked" | "retired" | "duplicate";

const FINAL: Record<FinalChange, { verb: string; button: string; consequence: (survivor?: string) => string }> = {
  revoked: {
    verb: "Revoke",
    button: "Revoke for good",
    consequence: () =>
      "Revoking tells every consumer that this identity must no longer be relied on. It cannot be undone: a revoked passport can only be retired afterwards. The resolver serves the revoked state at once.",
  },
  retired: {
    verb: "Retire",
    button: "Retire for good",
    consequence: () =>
      "Retiring ends this passport for good: its record and history are kept and still resolve, but it never changes again and its identity id is never reused.",
  },
  duplicate: {
    verb: "Retire as a duplicate",
    button: "Retire as a duplicate for good",
    consequence: (survivor) =>
      `This passport is retired for good and its record points consumers to ${survivor ?? "the surviving passport"}. It cannot be undone.`,
  },
};

/** Which final change a lifecycle or duplicate post asks for, if any. */
export function finalChange(
  action: "lifecycle" | "duplicate",
  fields: Record<string, string>,
): FinalChange | undefined {
  if (action === "duplicate") return "duplicate";
  return fields.lifecycle === "revoked" || fields.lifecycle === "retired" ? fields.lifecycle : undefined;
}

/**
 * What stops a final change from going ahead: not yet confirmed on the confirmation step (no
 * problem to show, the step is simply due), or confirmed without a reason or without ticking
 * that it is final (the problem, beside those fields).
 */
export function confirmationDue(fields: Record<string, string>): { problem?: Problem } | undefined {
  if (fields.step !== "confirm") return {};
  const errors = [
    ...(fields.reason?.trim()
      ? []
      : [{ path: "reason", message: "give the reason; it is kept public in the history" }]),
    ...(fields.confirm === "final"
      ? []
      : [{ path: "confirm", message: "tick this box to confirm the change is final" }]),
  ];
  if (errors.length === 0) return undefined;
  return {
    problem: {
      type: `${PROBLEM_TYPE_BASE}invalid-request`,
      title: "Not confirmed",
      status: 400,
      detail: "A final change needs a reason and your confirmation.",
      errors,
    },
  };
}

/**
 * The confirmation step of a final change: what will happen, in words, a required reason (public
 * in the history) and a required "this is final" box. A page of its own, so it works without script;
 * nothing changes until it is posted.
 */
export async function confirmationPage(
  c: UiContext,
  id: string,
  change: FinalChange,
  fields: Record<string, string>,
  problem?: Problem,
) {
  const viewer = c.get("viewer");
  const found = await c.get("api").call<PassportView>(`/v1/passports/${encodeURIComponent(id)}`);
  const name = found.ok ? (found.body.display_name ?? found.body.identity_id) : id;
  const text = FINAL[change];
  const action = `/dashboard/passports/${encodeURIComponent(id)}/${change === "duplicate" ? "duplicate" : "lifecycle"}`;
  const reasonError = fieldError(problem, "reason");
  const confirmError = fieldError(problem, "confirm");
  return c.html(
    <Layout title={`${text.verb}: ${name}`} viewer={viewer}>
      <p>
        <a href={`/dashboard/passports/${encodeURIComponent(id)}`}>← Back to the passport</a>
      </p>
      <h1>
        {text.verb} “{name}”?
      </h1>
      <form method="post" action={action} id="confirm-final" class="panel">
        <p class="problem" id="final-consequence">
          <strong>This is final.</strong> {text.consequence(fields.survivor_id)}
        </p>
        <input type="hidden" name="csrf" value={viewer.csrf} />
        <input type="hidden" name="step" value="confirm" />
        <input type="hidden" name="record_version" value={fields.record_version ?? ""} />
        {change === "duplicate" ? (
          <input type="hidden" name="survivor_id" value={fields.survivor_id ?? ""} />
        ) : (
          <input type="hidden" name="lifecycle" value={change} />
        )}
        <label for="confirm-reason">Reason (public in the history)</label>
        <input
          id="confirm-reason"
          name="reason"
          value={fields.reason ?? ""}
          required
          maxlength={1000}
          autocomplete="off"
          aria-invalid={reasonError ? "true" : undefined}
          aria-describedby={reasonError ? "confirm-reason-error" : undefined}
        />
        <FieldError id="confirm-reason-error" message={reasonError} />
        <p>
          <label class="choice">
            <input
              type="checkbox"
              name="confirm"
              value="final"
              required
              aria-invalid={confirmError ? "true" : undefined}
              aria-describedby={confirmError ? "confirm-final-error" : undefined}
            />{" "}
            I understand this is final and cannot be undone
          </label>
        </p>
        <FieldError id="confirm-final-error" message={confirmError} />
        {problem && !reasonError && !confirmError ? <ProblemMessage problem={problem} id="confirm-problem" /> : null}
        <p class="actions">
          <button type="submit" class="danger">
            {text.button}
          </button>
          <a href={`/dashboard/passports/${encodeURIComponent(id)}`}>Cancel</a>
        </p>
      </form>
    </Layout>,
    problem ? (problem.status as 400) : 200,
  );
}
