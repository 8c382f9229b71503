import { z } from "zod";
import type { Database } from "../db/client.ts";
import { CHECKLIST_ITEMS, completionChecklist } from "./checklist.ts";
import { type AcquisitionRow, accountOf, lifecycleOf, stagesOf } from "./queries/acquisitions.ts";
import { nextStep, STAGE_LABELS, type Stage } from "./stages.ts";

const Nullable = z.string().nullable();

/** One stage of an acquisition as the Dashboard API answers it. */
const StageView = z.object({
  stage: z.string(),
  label: z.string(),
  status: z.enum(["running", "retrying", "succeeded", "failed"]),
  attempts: z.int(),
  outcome: Nullable,
  error: z.object({ code: z.string(), message: Nullable }).nullable(),
  at: z.string(),
});

/** An acquisition's progress as the Dashboard API answers it (docs/acquisition.md). */
export const AcquisitionView = z.object({
  acquisition_id: z.string(),
  status: z.enum(["received", "processing", "completed", "failed"]),
  next: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  stages: z.array(StageView),
  error: z.object({ stage: z.string(), code: Nullable, message: Nullable, at: z.string() }).nullable(),
  /** What to send to support when set-up failed (spec 7); never the registration token. */
  support: z
    .object({
      acquisition_id: z.string(),
      stage: z.string(),
      stage_label: z.string(),
      at: z.string(),
      error_code: Nullable,
      message: Nullable,
      cloud_account: z.object({ aws_account_id: Nullable, customer_identifier: Nullable, product_code: Nullable }),
    })
    .nullable(),
  account: z.object({ organisation_id: z.string(), parent_organisation_id: Nullable, outcome: Nullable }).nullable(),
  passport: z
    .object({
      identity_id: z.string(),
      family: Nullable,
      outcome: Nullable,
      lifecycle: Nullable.describe(
        "The passport's lifecycle now: an adopted suspended passport stays suspended until its reactivation re-evaluates it.",
      ),
      dashboard_url: z.string(),
      resolver_url: z.url(),
    })
    .nullable(),
  checklist: z
    .array(
      z.object({
        item: z.enum(CHECKLIST_ITEMS),
        label: z.string(),
        state: z.enum(["done", "pending", "failed", "confirm"]),
      }),
    )
    .describe(
      "The completion checklist of spec 4.3, item by item: done (recorded by the service), pending, failed, or confirm (the customer checks it).",
    ),
  claimed: z.boolean(),
  claimed_by_you: z.boolean(),
  existing_account: z.boolean().optional(),
});
type AcquisitionView = z.infer<typeof AcquisitionView>;

export async function acquisitionView(
  db: Database,
  env: Env,
  row: AcquisitionRow,
  subject: string,
): Promise<AcquisitionView> {
  const [stages, account, lifecycle] = await Promise.all([
    stagesOf(db, row.id),
    accountOf(db, row),
    row.passportId ? lifecycleOf(db, row.passportId) : null,
  ]);
  return {
    acquisition_id: row.id,
    status: row.status,
    next: nextStep(row.status),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    stages: stages.map((s) => ({
      stage: s.stage,
      label: STAGE_LABELS[s.stage as Stage] ?? s.stage,
      status: s.status,
      attempts: s.attempts,
      outcome: s.outcome,
      error: s.errorCode ? { code: s.errorCode, message: s.errorMessage } : null,
      at: s.updatedAt,
    })),
    error: row.failedStage
      ? { stage: row.failedStage, code: row.errorCode, message: row.errorMessage, at: row.updatedAt }
      : null,
    support: row.failedStage
      ? {
          acquisition_id: row.id,
          stage: row.failedStage,
          stage_label: STAGE_LABELS[row.failedStage as Stage] ?? row.failedStage,
          at: row.updatedAt,
          error_code: row.errorCode,
          message: row.errorMessage,
          cloud_account: {
            aws_account_id: row.awsAccountId,
            customer_identifier: row.customerIdentifier,
            product_code: row.productCode,
          },
        }
      : null,
    account: account
      ? {
          organisation_id: account.organisationId,
          parent_organisation_id: account.parentOrganisationId,
          outcome: row.accountOutcome,
        }
      : null,
    passport: row.passportId
      ? {
          identity_id: row.passportId,
          family: row.family,
          outcome: row.passportOutcome,
          lifecycle,
          dashboard_url: `/dashboard/passports/${row.passportId}`,
          resolver_url: `${env.RESOLVER_BASE_URL}/api/p/${row.passportId}.json`,
        }
      : null,
    checklist: completionChecklist(
      stages.map((s) => ({ stage: s.stage, status: s.status, error: s.errorCode ? { code: s.errorCode } : null })),
    ),
    claimed: row.claimedBy !== null,
    claimed_by_you: row.claimedBy === subject,
  };
}

/** An organisation's marketplace subscriptions with their events, and its acquisitions with their stages. */
export const SubscriptionHistory = z.object({
  subscriptions: z.array(
    z.object({
      product_code: z.string().nullable(),
      license_arn: z.string().nullable(),
      aws_account_id: z.string().nullable(),
      agreement_id: z.string().nullable(),
      status: z.string(),
      status_at: z.string(),
      last_event: z.string().nullable(),
      since: z.string(),
      events: z
        .array(z.object({ kind: z.string(), occurred_at: z.string(), received_at: z.string(), outcome: z.string() }))
        .describe("Subscription events from the marketplace, newest first (up to 200 per organisation)."),
    }),
  ),
  // The acquisition view's own fields, as a summary per handoff.
  acquisitions: z
    .array(
      AcquisitionView.pick({ acquisition_id: true, status: true, created_at: true }).extend({
        product_code: z.string().nullable(),
        stages: z.array(StageView.pick({ stage: true, label: true, status: true, attempts: true, at: true })),
      }),
    )
    .describe("Marketplace handoffs for this organisation's cloud account, newest first (up to 20)."),
});
