import type { LifecycleStatus } from "./record.ts";

/**
 * Lifecycle transitions the control plane allows (docs/lifecycle.md). Retired is terminal, so a
 * retired identity is never repurposed (spec 3); revocation can only be followed by retirement.
 */
const LIFECYCLE_TRANSITIONS: Record<LifecycleStatus, readonly LifecycleStatus[]> = {
  active: ["suspended", "revoked", "retired"],
  suspended: ["active", "revoked", "retired"],
  revoked: ["retired"],
  retired: [],
};

export function allowedTransitions(from: LifecycleStatus): readonly LifecycleStatus[] {
  return LIFECYCLE_TRANSITIONS[from];
}

/**
 * True when `to` may follow `from`. Staying in the same status is not a transition.
 * @example
 * canTransition("suspended", "active"); // true: a reactivation
 */
export function canTransition(from: LifecycleStatus, to: LifecycleStatus): boolean {
  return LIFECYCLE_TRANSITIONS[from].includes(to);
}

/** A return to active from another status: bindings and evidence must be re-checked (spec 3). */
export function isReactivation(from: LifecycleStatus, to: LifecycleStatus): boolean {
  return to === "active" && from !== "active";
}
