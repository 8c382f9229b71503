import { identityCacheTag, identityIdDefect, type PassportRecord, problem, signatureAgentCard } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS, malformedIdAnswer, problemAnswer } from "../http.ts";
import { lookUp, NOT_FOUND_DETAIL, UNAVAILABLE_DETAIL } from "../published-snapshots.ts";

const CARD_HEADERS = { ...CORS_HEADERS, "content-type": "application/json; charset=utf-8" };

const NO_CARD_DETAIL =
  "Only an agent passport with a verified, fresh signing_keys binding has a Signature Agent Card: its keys are what the card is for. The record (/api/p/{id}.json) says which bindings are proven.";

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
  if (found.kind === "unknown")
    return problemAnswer(problem("identity-not-found", { detail: NOT_FOUND_DETAIL }), tagged);
  // Validated against PassportRecord when it was published; parsing is all the card needs.
  const record = JSON.parse(found.snapshot.body) as PassportRecord;
  const card = signatureAgentCard(record, c.env.PUBLIC_BASE_URL, Date.now());
  if (!card) return problemAnswer(problem("no-signature-agent-card", { detail: NO_CARD_DETAIL }), tagged);
  return new Response(JSON.stringify(card), { headers: { ...CARD_HEADERS, ...tagged } });
});
