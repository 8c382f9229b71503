import type { Stage } from "./stages.ts";

// The completion checklist of spec 4.3, item by item, read from the acquisition's stages. Items
// the service cannot see (the Dashboard showing the intended identity, no secret copied anywhere)
// are the customer's to confirm, and say so: the service never ticks them for the customer.

export const CHECKLIST_ITEMS = [
  "subscribed_at_zero_charge",
  "account_setup_completed",
  "handoff_reached_operations",
  "account_and_parent",
  "product_code_mapped",
  "passport_issued_or_reused",
  "dashboard_shows_identity",
  "resolver_returns_passport",
  "no_secrets_copied",
] as const;
type ChecklistItem = (typeof CHECKLIST_ITEMS)[number];

/**
 * `done`: the service recorded it; `pending`: not yet; `failed`: its stage failed; `confirm`: the
 * customer checks it themselves (the service has done its part, or cannot see it).
 */
type ChecklistState = "done" | "pending" | "failed" | "confirm";

const CHECKLIST_LABELS: Record<ChecklistItem, string> = {
  subscribed_at_zero_charge: "Subscribed at zero software charge",
  account_setup_completed: "Marketplace set-up action completed",
  handoff_reached_operations: "Handoff reached the operations component",
  account_and_parent: "Account and parent organisation reused or correctly created",
  product_code_mapped: "Product code mapped to the API passport family",
  passport_issued_or_reused: "Passport issued or reused",
  dashboard_shows_identity: "The Dashboard shows the intended identity",
  resolver_returns_passport: "The Resolver returns the passport",
  no_secrets_copied: "No secrets copied into public or support channels",
};

/** The stage whose success ticks each item the service can see. */
const TICKED_BY: Partial<Record<ChecklistItem, Stage>> = {
  // The offer is checked for zero charge in activation (docs/acquisition.md, "Zero charge").
  subscribed_at_zero_charge: "activation",
  // The registration token arrives only through the marketplace's set-up action.
  account_setup_completed: "registration_token_handoff",
  handoff_reached_operations: "customer_identification",
  account_and_parent: "account",
  product_code_mapped: "product_mapping",
  passport_issued_or_reused: "passport",
};

/** What the customer is asked to confirm, once the service's part is done (steps 9-10). */
const CONFIRMED_AFTER: Partial<Record<ChecklistItem, Stage>> = {
  dashboard_shows_identity: "claim",
  resolver_returns_passport: "publication",
};

export interface ChecklistEntry {
  item: ChecklistItem;
  label: string;
  state: ChecklistState;
}

/** The error code activation fails with when the offer is not the zero-charge listing. */
export const CHARGED_OFFER = "ChargedOffer";

/** The checklist of an acquisition whose stages have these statuses (and error codes). */
export function completionChecklist(
  stages: { stage: string; status: string; error?: { code: string } | null }[],
): ChecklistEntry[] {
  const byStage = new Map(stages.map((s) => [s.stage, s]));
  return CHECKLIST_ITEMS.map((item) => {
    const ticking = TICKED_BY[item];
    const after = CONFIRMED_AFTER[item];
    let state: ChecklistState = "confirm";
    if (ticking) {
      const reached = byStage.get(ticking);
      state = reached?.status === "succeeded" ? "done" : reached?.status === "failed" ? "failed" : "pending";
      // Activation failing for another reason (no entitlement) says nothing about the charge.
      if (item === "subscribed_at_zero_charge" && state === "failed" && reached?.error?.code !== CHARGED_OFFER) {
        state = "pending";
      }
    } else if (after) {
      state = byStage.get(after)?.status === "succeeded" ? "confirm" : "pending";
    }
    return { item, label: CHECKLIST_LABELS[item], state };
  });
}
