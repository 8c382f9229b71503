// TEMPORARY stand-in for `Verifier.decide` until the policy branch implements it: decides over
// the policy members an expectation can say. Replaced by `verifier.decide` at the merge.
import type { DecideRequest, DecisionResult } from "../decide.ts";
import type { Decision } from "../policy.ts";
import { actionPolicyFor } from "../policy.ts";
import type { Verifier } from "../verifier.ts";

const NEXT: Record<string, Decision> = {
  proceed: "allow",
  challenge: "challenge",
  deny: "deny",
  delay: "delay",
  "re-resolve": "re-resolve",
};

/** Stand-in for `Verifier.decide` over the policy members the expectation can say. */
export async function decide(verifier: Verifier, identityId: string, request: DecideRequest): Promise<DecisionResult> {
  const policy = actionPolicyFor(request.policy, request.action);
  const organisation = policy.organisations?.[0];
  const outcome = await verifier.verify(identityId, {
    ...(policy.family ? { family: policy.family } : {}),
    ...(organisation ? { organisation } : {}),
    ...(policy.environments?.[0] ? { environment: policy.environments[0] } : {}),
    ...(policy.bindings ? { bindings: policy.bindings } : {}),
    ...(policy.lifecycle ? { lifecycle: policy.lifecycle } : {}),
    ...(policy.availability ? { availability: policy.availability } : {}),
    ...(policy.claims ? { evidence: policy.claims.map((c) => ({ claim: c.claim, maxAge: c.max_age })) } : {}),
    ...(policy.status_max_age !== undefined ? { statusMaxAge: policy.status_max_age } : {}),
    consequence: policy.consequence ?? "lower",
    ...(request.baseUrl ? { baseUrl: request.baseUrl } : {}),
    ...(request.statusToken ? { statusToken: request.statusToken } : {}),
    ...(request.record ? { record: request.record } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
  });
  const decision: Decision = policy.outcomes?.[outcome.outcome] ?? NEXT[outcome.next_step] ?? "deny";
  const relied = outcome.relied_on;
  return {
    decision,
    outcome,
    receipt: {
      receipt_format: "svc.passport_decision",
      version: 1,
      decided_at: new Date().toISOString(),
      action: request.action,
      policy_digest: "sha-256:stub",
      decision,
      outcome: outcome.outcome,
      subject: {
        identity_id: identityId,
        ...(relied.record_version !== undefined ? { record_version: relied.record_version } : {}),
        ...(relied.digest ? { digest: relied.digest } : {}),
      },
      checks: [{ check: "passport", result: outcome.ok ? "passed" : "failed", detail: outcome.outcome }],
    },
  };
}
