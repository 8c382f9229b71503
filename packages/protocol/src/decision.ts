/**
 * The decision vocabulary of a consumer's policy document (docs/policy.md): its format name and
 * version, the decisions it may map an outcome to, the authority outcomes beside the verifier's
 * outcome classes, and the size limits. The verifier reads policies by hand and the domain's zod
 * schema (served as JSON Schema) describes them; both take these from here.
 */
import type { OutcomeClass } from "./outcome.ts";

export const POLICY_FORMAT = "svc.passport_policy";
export const POLICY_VERSION = 1;

export type Decision = "allow" | "challenge" | "deny" | "delay" | "re-resolve";
export const DECISIONS: readonly Decision[] = ["allow", "challenge", "deny", "delay", "re-resolve"];

/** The authority results that are not `held`, as keys of an `outcomes` table (`not_established` maps as `authority_not_held`). */
export const AUTHORITY_OUTCOMES = ["authority_not_held", "authority_expired", "authority_not_entitled"] as const;
export type AuthorityOutcome = (typeof AUTHORITY_OUTCOMES)[number];
export type PolicyOutcome = OutcomeClass | AuthorityOutcome;

/** Lengths of names and texts, and sizes of lists and of the actions table, in a policy document. */
export const POLICY_LIMITS = { name: 200, text: 1000, list: 64, actions: 256 } as const;
