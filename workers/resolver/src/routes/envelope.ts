import {
  deriveEnvelope,
  type EnvelopeTarget,
  identityCacheTag,
  manifestIndexPrefix,
  type PassportRecord,
  parseEnvelopeTarget,
  problem,
} from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS, problemAnswer } from "../http.ts";
import { lookUp, UNAVAILABLE_DETAIL } from "../published-snapshots.ts";

export const envelope = new Hono<{ Bindings: Env }>();

/** At most this many claimants of one manifest are read; more than one is already ambiguous. */
const MAX_CLAIMANTS = 5;

/** The published records a target resolves to, from the snapshots and the manifest index only. */
async function recordsFor(env: Env, target: EnvelopeTarget): Promise<PassportRecord[] | "unavailable"> {
  let ids: string[];
  if (target.kind === "identity") {
    ids = [target.identityId];
  } else {
    const prefix = await manifestIndexPrefix(target.url);
    const listed = await env.SNAPSHOTS.list({ prefix, limit: MAX_CLAIMANTS });
    ids = listed.keys.map((key) => key.name.slice(prefix.length));
  }
  const records: PassportRecord[] = [];
  for (const id of ids) {
    const found = await lookUp(env.SNAPSHOTS, id);
    if (found.kind === "unavailable") return "unavailable";
    // Published records were validated by the publisher; the resolver only reads them.
    if (found.kind === "found") records.push(JSON.parse(found.snapshot.body) as PassportRecord);
  }
  return records;
}

function requiredClaims(env: Env): string[] {
  try {
    const claims = JSON.parse(env.ENVELOPE_REQUIRED_CLAIMS) as unknown;
    if (Array.isArray(claims) && claims.every((c) => typeof c === "string")) return claims;
  } catch {}
  throw new Error("ENVELOPE_REQUIRED_CLAIMS must be a JSON array of claim names");
}

/**
 * `GET {base}/api/agent-envelope?target={agent manifest URL or identity id}`: the read-only agent
 * action envelope of spec 2.4, derived from published data by the rule table in
 * docs/agent-envelope.md. It never writes anything.
 */
envelope.get("/", async (c) => {
  const raw = c.req.query("target");
  const target = parseEnvelopeTarget(raw);
  if (!raw || !target) {
    return problemAnswer(
      problem("invalid-envelope-target", {
        detail:
          "target must be an agent identity id (psp_…) or the http(s) URL of an agent manifest, without credentials.",
      }),
      cacheHeaders("short"),
    );
  }
  const records = await recordsFor(c.env, target);
  if (records === "unavailable") {
    return problemAnswer(problem("unavailable", { detail: UNAVAILABLE_DETAIL }), {
      ...cacheHeaders("none"),
      "retry-after": "5",
    });
  }
  const base = c.env.PUBLIC_BASE_URL;
  const body = deriveEnvelope({
    target: raw,
    parsed: target,
    records,
    policy: { requiredClaims: requiredClaims(c.env) },
    resolverBaseUrl: base,
    dashboardBaseUrl: c.env.DASHBOARD_BASE_URL || undefined,
    developerGuidanceUrl: `${base}/guidance/agent-envelope`,
    now: new Date(),
  });
  // Cached like the records it is derived from, and purged with them by their identity tags. An
  // envelope for a manifest nobody claims yet is kept briefly, as a 404 would be.
  const tags = target.kind === "identity" ? [target.identityId] : records.map((r) => r.identity_id);
  const cache = records.length > 0 ? cacheHeaders("identity") : cacheHeaders("short");
  return new Response(JSON.stringify(body), {
    headers: {
      ...CORS_HEADERS,
      ...cache,
      ...(tags.length > 0 ? { "cache-tag": tags.map(identityCacheTag).join(",") } : {}),
      "content-type": "application/json; charset=utf-8",
    },
  });
});
