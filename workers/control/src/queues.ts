/**
 * The control plane's queues, and which of them a batch came from. One rule names them for the
 * deploy (scripts/deploy/config.ts) and routes their batches here (`index.ts`): production keeps
 * the base names, another environment appends `-<environment>`, and the acquisitions'
 * dead-letter queue is the acquisitions queue's name followed by `-dlq`. Routing by the rule, not
 * by production's names, is what makes a staging deploy fail a dead-lettered acquisition visibly
 * instead of running it again as a fresh delivery (docs/deploy.md).
 */

const ACQUISITIONS = "passport-acquisitions";
const BINDING_CHECKS = "passport-binding-checks";
const NOTIFICATIONS = "passport-notifications";
const DEAD_LETTER_SUFFIX = "-dlq";

/**
 * An environment whose name ends in `dlq` would name its acquisitions queue as another
 * environment's dead-letter queue (`dlq` takes production's), so the deploy refuses it.
 */
export const collidesWithDeadLetterQueue = (environment: string): boolean =>
  environment === "dlq" || environment.endsWith(DEAD_LETTER_SUFFIX);

/** The queues' names in one environment; `undefined` is production, which keeps the base names. */
export function queueNames(environment: string | undefined) {
  const named = (base: string) => (environment === undefined ? base : `${base}-${environment}`);
  return {
    acquisitions: named(ACQUISITIONS),
    deadLetter: `${named(ACQUISITIONS)}${DEAD_LETTER_SUFFIX}`,
    bindingChecks: named(BINDING_CHECKS),
    notifications: named(NOTIFICATIONS),
    notificationsDeadLetter: `${named(NOTIFICATIONS)}${DEAD_LETTER_SUFFIX}`,
  };
}

export type QueueRole = keyof ReturnType<typeof queueNames>;

const ROLES: readonly [QueueRole, RegExp][] = [
  ["deadLetter", new RegExp(`^${ACQUISITIONS}(-[a-z][a-z0-9-]*)?${DEAD_LETTER_SUFFIX}$`)],
  ["acquisitions", new RegExp(`^${ACQUISITIONS}(-[a-z][a-z0-9-]*)?$`)],
  ["bindingChecks", new RegExp(`^${BINDING_CHECKS}(-[a-z][a-z0-9-]*)?$`)],
  ["notificationsDeadLetter", new RegExp(`^${NOTIFICATIONS}(-[a-z][a-z0-9-]*)?${DEAD_LETTER_SUFFIX}$`)],
  ["notifications", new RegExp(`^${NOTIFICATIONS}(-[a-z][a-z0-9-]*)?$`)],
];

/** Which queue `name` is, in any environment; `undefined` for a queue the control plane does not own. */
export function queueRole(name: string): QueueRole | undefined {
  return ROLES.find(([, pattern]) => pattern.test(name))?.[0];
}
