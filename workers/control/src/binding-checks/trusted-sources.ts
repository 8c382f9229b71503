/**
 * The evidence sources the operator trusts (TRUSTED_EVIDENCE_SOURCES, a JSON array of source
 * names): asserted evidence naming one of them exactly counts for required claims.
 */
export function trustedSources(env: Pick<Env, "TRUSTED_EVIDENCE_SOURCES">): string[] {
  try {
    const list = JSON.parse(env.TRUSTED_EVIDENCE_SOURCES || "[]") as unknown;
    if (Array.isArray(list) && list.every((s) => typeof s === "string")) return list;
  } catch {}
  throw new Error("TRUSTED_EVIDENCE_SOURCES must be a JSON array of source names");
}
