import type { LifecycleStatus } from "@passport/domain";

export { BINDING_CLASS_LABELS as BINDING_LABELS } from "@passport/domain";

/** The verb on the button that moves a passport into each lifecycle status. */
export const TRANSITION_VERBS: Record<LifecycleStatus, string> = {
  active: "Reactivate",
  suspended: "Suspend",
  revoked: "Revoke",
  retired: "Retire",
};

const HISTORY_LABELS: Record<string, string> = {
  "passport.created": "Passport created",
  "display.updated": "Display name changed",
  "binding.added": "Binding added",
  "binding.removed": "Binding removed",
  "binding.verified": "Binding verified",
  "binding.lapsed": "Binding lapsed",
  "binding.conflict": "Binding also proven by another organisation",
  "evidence.added": "Evidence added",
  "evidence.withdrawn": "Evidence withdrawn",
  "evidence.trust_withdrawn": "Evidence no longer trusted (its source never attested it)",
  "state.changed": "State changed",
  "state.lifecycle_changed": "Lifecycle changed",
  "state.reactivated": "Reactivated",
  "authority.added": "Authority context added",
  "authority.removed": "Authority context removed",
  "authority.expired": "Authority context expired",
  "uses.declared": "Use of a passport declared",
  "uses.removed": "Use of a passport no longer declared",
  "duplicate.retired": "Retired as a duplicate",
  "responsibility.changed": "Responsibility moved",
  "relationship.changed": "Organisation's relationship stated",
  "operator.changed": "Operator organisation stated",
  "organisation.renamed": "Organisation renamed",
  "organisation.parent_changed": "Organisation's parent changed",
  "organisation.recovered": "Owner recovered by an operator",
};

export function historyLabel(kind: string): string {
  return HISTORY_LABELS[kind] ?? kind;
}

/** One readable line from a history event's detail (values only; no member data beyond the actor). */
export function historySummary(detail: Record<string, unknown>): string {
  const parts: string[] = [];
  const lifecycle = detail.lifecycle as { from?: string; to?: string } | undefined;
  if (lifecycle?.from && lifecycle.to) parts.push(`${lifecycle.from} → ${lifecycle.to}`);
  for (const key of ["class", "value", "claim", "source", "availability", "environment", "version", "action"]) {
    const value = detail[key];
    if (typeof value === "string" && value) parts.push(key === "value" ? value : `${key}: ${value}`);
  }
  if (typeof detail.survivor_id === "string") parts.push(`duplicate of ${detail.survivor_id}`);
  if (typeof detail.to === "string" && typeof detail.from === "string") parts.push(`${detail.from} → ${detail.to}`);
  if (detail.recheck_required) parts.push("re-check required");
  if (detail.recheck_completed) parts.push("re-check confirmed");
  if (typeof detail.reason === "string") parts.push(`reason: ${detail.reason}`);
  return parts.join(" · ");
}
