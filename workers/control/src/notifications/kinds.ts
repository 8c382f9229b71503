// What a subscriber can ask to be told about (docs/events.md, "Event kinds"), derived from the
// history change kinds a publication carries (docs/signing.md). A notification names the kinds
// it matched and the change kinds themselves; it never carries the record's content.

export const EVENT_KINDS = ["lifecycle", "binding", "key", "authority", "version"] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/**
 * The history change kinds behind each event kind. `version` is every publication, whatever
 * changed; a change kind not listed here (a renamed organisation, new evidence) still reaches a
 * `version` subscription.
 */
const CHANGE_KINDS_OF: Record<Exclude<EventKind, "version" | "key">, ReadonlySet<string>> = {
  // Suspension, revocation, retirement, reactivation, and the duplicate rule's retirement.
  lifecycle: new Set(["passport.created", "state.lifecycle_changed", "state.reactivated", "duplicate.retired"]),
  // A binding that lapsed, recovered (verified again), was contested, added, removed or re-scoped.
  binding: new Set([
    "binding.added",
    "binding.removed",
    "binding.lapsed",
    "binding.verified",
    "binding.conflict",
    "binding.context_changed",
    "binding.gateway_control",
  ]),
  authority: new Set(["authority.added", "authority.removed", "authority.expired", "responsibility.changed"]),
};

/**
 * The event kinds a publication with `changeKinds` matches, in EVENT_KINDS order; always `version`.
 * A key change is a binding change of a `signing_keys` binding (docs/reciprocal-trust.md), which
 * only the events' details say: `keysChanged` is read from them.
 */
export function eventKindsOf(changeKinds: readonly string[], keysChanged: boolean): EventKind[] {
  const matches = (kind: EventKind) =>
    kind === "version" ||
    (kind === "key" ? keysChanged : changeKinds.some((change) => CHANGE_KINDS_OF[kind].has(change)));
  return EVENT_KINDS.filter(matches);
}

/** The kinds a subscription asked for that a publication matched; none means it is not told. */
export function wantedKinds(asked: readonly string[], matched: readonly EventKind[]): EventKind[] {
  return matched.filter((kind) => asked.includes(kind));
}
