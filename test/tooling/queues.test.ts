import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DeploySettings } from "../../scripts/deploy/settings.ts";
import { type QueueRole, queueNames, queueRole } from "../../workers/control/src/queues.ts";

// The deploy names the control plane's queues per environment and the control plane routes each
// batch by its queue's name (workers/control/src/queues.ts). Both follow from one rule; these
// properties hold it over every environment name the deploy settings accept.

/** The environment names the settings accept (an empty environment's settings are not needed to check a key). */
const accepted = (name: string) => DeploySettings.shape.environments.keyType.safeParse(name).success;

const environmentName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/).filter(accepted);
/** Production (`undefined`) or another environment the settings accept. */
const environment = fc.option(environmentName, { nil: undefined });

describe("the queues' naming rule", () => {
  it("routes each of an environment's queues to its own role", () => {
    fc.assert(
      fc.property(environment, (name) => {
        for (const [role, queue] of Object.entries(queueNames(name)) as [QueueRole, string][]) {
          expect(queueRole(queue)).toBe(role);
        }
      }),
    );
  });

  it("gives two environments no queue in common", () => {
    fc.assert(
      fc.property(environment, environment, (a, b) => {
        fc.pre(a !== b);
        const theirs = Object.values(queueNames(b));
        expect(Object.values(queueNames(a)).filter((queue) => theirs.includes(queue))).toEqual([]);
      }),
    );
  });

  it("refuses the environment names that would take another's dead-letter queue", () => {
    for (const name of ["dlq", "staging-dlq", "eu-dlq"]) expect(accepted(name)).toBe(false);
    // Without the refusal, `dlq` would name its acquisitions queue as production's dead-letter queue.
    expect(queueNames("dlq").acquisitions).toBe(queueNames(undefined).deadLetter);
    for (const name of ["staging", "dlq-eu", "eu-dlqs"]) expect(accepted(name)).toBe(true);
  });

  it("knows no queue it does not own", () => {
    for (const queue of ["orders", "passport-acquisitions-", "passport-acquisitions-2eu", "my-passport-acquisitions"]) {
      expect(queueRole(queue)).toBeUndefined();
    }
  });
});
