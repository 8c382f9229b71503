/**
 * The agent action envelope's type and version (spec 2.4). A module of their own: the schema
 * (with zod) and the derivation (without it, so the resolver's bundle stays small) both use them.
 */
export const ENVELOPE_TYPE = "svc.agent_action_envelope";
export const ENVELOPE_VERSION = "2026-10";
