import { identityCacheTag, identityIdDefect, type PassportRecord, problem } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS, malformedIdAnswer, problemAnswer } from "../http.ts";
import { lookUp, NOT_FOUND_DETAIL, UNAVAILABLE_DETAIL } from "../published-snapshots.ts";

// The Signature Agent Card (draft-meunier-webbotauth-registry) of an agent passport, derived from
// its published record alone (docs/signature-agent-card.md). Member names from the OAuth client
// metadata registry the draft draws on; everything the passport adds is under `passport`.

const CARD_HEADERS = { ...CORS_HEADERS, "content-type": "application/json; charset=utf-8" };

const NO_CARD_DETAIL =
  "Only an agent passport with a verified, fresh signing_keys binding has a Signature Agent Card: its keys are what the card is for. The record (/api/p/{id}.json) says which bindings are proven.";

/** A key the card lists: proven by one signing_keys binding, current until that proof runs out. */
interface CardKey {
  thumbprint: string;
  kid?: string;
  alg?: string;
  directory: string;
  fresh_until: string;
}

/**
 * The proven keys of the record: those of its `signing_keys` bindings that are verified and still
 * within their freshness, as a verifier counts them. A lapsed binding's keys are not listed.
 */
function provenKeys(record: PassportRecord, now: number): CardKey[] {
  const keys: CardKey[] = [];
  for (const binding of record.bindings) {
    const { verification } = binding;
    if (binding.class !== "signing_keys" || verification.state !== "verified" || !binding.keys) continue;
    if (Date.parse(verification.fresh_until) <= now) continue;
    for (const key of binding.keys) {
      keys.push({ ...key, directory: binding.value, fresh_until: verification.fresh_until });
    }
  }
  return keys;
}

/**
 * The card of an agent passport with at least one proven key; null for any other record. The
 * record holds thumbprints, never key material (docs/reciprocal-trust.md), so the card names the
 * keys by thumbprint (Web Bot Auth's keyid) and the directory that serves each one.
 */
function signatureAgentCard(record: PassportRecord, base: string, now: number) {
  if (record.family !== "agent") return null;
  const keys = provenKeys(record, now);
  if (keys.length === 0) return null;
  const id = record.identity_id;
  return {
    client_name: record.display_name ?? id,
    client_uri: `${base}/p/${id}`,
    passport: {
      identity_id: id,
      record_url: `${base}/api/p/${id}.json`,
      record_digest: record.digest,
      organisation: { id: record.organisation.id, name: record.organisation.name },
      ...(record.operator ? { operator: record.operator } : {}),
      keys,
    },
  };
}

/**
 * `GET {base}/api/p/{identity_id}/signature-agent-card.json`: read from the published snapshot
 * like the record, with its cache policy and Cache-Tag, so a publication's purge drops it too.
 */
export const signatureAgentCards = new Hono<{ Bindings: Env }>();

signatureAgentCards.get("/:id/signature-agent-card.json", async (c) => {
  const id = c.req.param("id");
  const defect = identityIdDefect(id);
  if (defect) return malformedIdAnswer(defect);
  const found = await lookUp(c.env.SNAPSHOTS, id);
  const tagged = { ...cacheHeaders("identity"), "cache-tag": identityCacheTag(id) };
  if (found.kind === "unavailable") {
    return problemAnswer(problem("unavailable", { detail: UNAVAILABLE_DETAIL }), {
      ...cacheHeaders("none"),
      "retry-after": "5",
    });
  }
  if (found.kind === "unknown") return problemAnswer(problem("identity-not-found", { detail: NOT_FOUND_DETAIL }), tagged);
  // Validated against PassportRecord when it was published; parsing is all the card needs.
  const record = JSON.parse(found.snapshot.body) as PassportRecord;
  const card = signatureAgentCard(record, c.env.PUBLIC_BASE_URL, Date.now());
  if (!card) return problemAnswer(problem("no-signature-agent-card", { detail: NO_CARD_DETAIL }), tagged);
  return new Response(JSON.stringify(card), { headers: { ...CARD_HEADERS, ...tagged } });
});
