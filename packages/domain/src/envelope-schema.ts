import { ENVELOPE_ACTION_KINDS, ENVELOPE_ASSURANCES, ENVELOPE_TYPE, RECOMMENDED_PATHS } from "@passport/protocol";
import { z } from "zod";
import { ModelContext } from "./record.ts";

/** The agent action envelope of spec 2.4. Extra members are allowed by the spec; ours are documented. */
export const AgentActionEnvelope = z
  .object({
    type: z.literal(ENVELOPE_TYPE),
    version: z.string(),
    subject: z
      .object({
        target: z.string(),
        target_type: z.literal("agent_manifest"),
        environment: z
          .string()
          .optional()
          .describe(
            "The environment the target runs in: the manifest binding's own, else the passport's state.environment; absent when neither states one.",
          ),
        version: z
          .string()
          .optional()
          .describe("The target's version: the manifest binding's own, else the passport's state.version."),
        model: ModelContext.optional().describe(
          "The model the agent runs, from the passport's state.model: context only, never an input to the posture.",
        ),
      })
      .loose(),
    posture: z.string(),
    result: z.string(),
    missing_evidence: z.array(z.string()),
    recommended_path: z.enum(RECOMMENDED_PATHS),
    actions: z.array(
      z
        .object({ label: z.string(), kind: z.enum(ENVELOPE_ACTION_KINDS), url: z.string().nullable().optional() })
        .loose(),
    ),
    resolver_url: z.string().nullable().optional(),
    machine_json_url: z.string().nullable().optional(),
    ops_action_url: z.string().optional(),
    developer_guidance_url: z.string().optional(),
    authority_boundary: z.string(),
    local_policy_decides: z.literal(ENVELOPE_ASSURANCES.local_policy_decides),
    recheck_before_reliance: z.literal(ENVELOPE_ASSURANCES.recheck_before_reliance),
    no_safety_or_approval_inference: z.literal(ENVELOPE_ASSURANCES.no_safety_or_approval_inference),
    verifier_writes_truth: z.literal(ENVELOPE_ASSURANCES.verifier_writes_truth),
    verifier_activates_proof: z.literal(ENVELOPE_ASSURANCES.verifier_activates_proof),
    verifier_marks_bound: z.literal(ENVELOPE_ASSURANCES.verifier_marks_bound),
    identity_id: z.string().nullable().optional().describe("The agent passport the target resolved to, if any."),
    organisation: z
      .object({ id: z.string(), name: z.string() })
      .optional()
      .describe("The organisation responsible for that passport."),
    record_version: z.int().optional().describe("Version of the record the envelope was derived from."),
    stale_evidence: z.array(z.string()).optional().describe("Required claims whose evidence is past fresh_until."),
    evaluated_at: z.string().optional(),
  })
  .loose();
export type AgentActionEnvelope = z.infer<typeof AgentActionEnvelope>;
