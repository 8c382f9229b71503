// The verifier bench's policy row (issue 27): the full check with a policy (`Verifier.decide`:
// the expectation from the policy's action, the decision, authority and the receipt) against
// today's full check with the same expectation (`Verifier.verify`). Target: at most 1.1x per record.
import { loadPolicy } from "../../../packages/verifier/src/index.ts";

/** The most a decision with a policy may cost, as a multiple of today's full check per record. */
export const POLICY_TARGET = 1.1;

const POLICY = loadPolicy({
  policy_format: "svc.passport_policy",
  version: 1,
  actions: {
    read: {
      family: "api",
      consequence: "changing",
      organisations: ["org_bench"],
      environments: ["production"],
      versions: "^2026.10.0",
      outcomes: { state_not_operative: "delay" },
    },
  },
});

/** Today's expectation equal to the policy's `read` action. */
const EXPECTATION = {
  family: "api",
  consequence: "changing",
  organisation: "org_bench",
  environment: "production",
  version: "2026.10.1",
};

/** The pair for the verifier bench, on a verifier with pinned keys. */
export function policyPair(verifier) {
  return {
    name: "full check with a policy (decide)",
    baseline: "full check (verify)",
    subject: (r) => verifier.decide(r.id, { policy: POLICY, action: "read" }),
    reference: (r) => verifier.verify(r.id, EXPECTATION),
    checks: [(x) => x.decision === "allow" && x.receipt?.outcome === "ok", (x) => x.outcome === "ok"],
  };
}

/**
 * Prints the policy row's per-record cost ratio and returns it as a bench check, so a missed
 * target fails `npm run bench -- verifier` like the other targets do (none when the row was not run).
 */
export function policyCheck(results) {
  const row = results.find((r) => r.name === "full check with a policy (decide)");
  if (!row) return [];
  const p50 = row.ratios.p50.median;
  const mean = 1 / row.ratios.rps.median;
  const ok = p50 <= POLICY_TARGET;
  console.log(
    `verifier: a decision with a policy costs ${p50.toFixed(3)}x today's full check per record at p50 (${mean.toFixed(3)}x by mean time; target <= ${POLICY_TARGET}x at p50): ${ok ? "met" : "missed"}`,
  );
  return [
    {
      name: "a decision with a policy, p50 per record against today's full check (x)",
      ok,
      value: p50,
      target: POLICY_TARGET,
      at_most: true,
      detail: `row "${row.name}", rounds ${row.ratios.p50.min.toFixed(3)}..${row.ratios.p50.max.toFixed(3)}x`,
    },
  ];
}
