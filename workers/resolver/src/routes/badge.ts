import { identityCacheTag, identityIdDefect, type PassportRecord, PRIMARY_BINDING_CLASS } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS } from "../http.ts";
import { lookUp } from "../published-snapshots.ts";

/** An image, never a document: no script, no fetches, not to be sniffed as anything else. */
const IMAGE_HEADERS = {
  ...CORS_HEADERS,
  "content-type": "image/svg+xml; charset=utf-8",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
  "x-content-type-options": "nosniff",
};

const FAMILY_WORDS: Record<PassportRecord["family"], string> = { api: "API passport", agent: "agent passport" };
const COLOURS = { ok: "#1d6b35", warn: "#8a5a00", bad: "#a12828", grey: "#555" };

/**
 * Whether the record's primary binding is proven now: verified and still within its freshness. A
 * verified binding past `fresh_until` counts as lapsed, as a verifier counts it.
 */
function primaryVerified(record: PassportRecord, now: number): boolean {
  const primary = PRIMARY_BINDING_CLASS[record.family];
  return record.bindings.some(
    (b) => b.class === primary && b.verification.state === "verified" && Date.parse(b.verification.fresh_until) > now,
  );
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** A two-part badge; widths are estimated from the text at 11px, which is close enough for these words. */
function badgeSvg(label: string, message: string, colour: string): string {
  const width = (text: string) => Math.round(text.length * 6.6) + 12;
  const left = width(label);
  const right = width(message);
  const title = escapeXml(`${label}: ${message}`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${left + right}" height="20" role="img" aria-label="${title}"><title>${title}</title><rect width="${left}" height="20" fill="#555"/><rect x="${left}" width="${right}" height="20" fill="${colour}"/><g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle"><text x="${left / 2}" y="14">${escapeXml(label)}</text><text x="${left + right / 2}" y="14">${escapeXml(message)}</text></g></svg>`;
}

function answer(svg: string, status: number, cache: Record<string, string>): Response {
  return new Response(svg, { status, headers: { ...IMAGE_HEADERS, ...cache } });
}

/**
 * `GET {base}/api/p/{id}/badge.svg`: an embeddable status image read from the published snapshot
 * (family, lifecycle state, whether the primary binding is verified). It carries the identity's
 * Cache-Tag and the record's cache policy, so the purge after a publication drops it with the
 * record. Every failure is an image too, with the status a consumer of the record would get.
 */
export const badge = new Hono<{ Bindings: Env }>();

badge.get("/:id/badge.svg", async (c) => {
  const id = c.req.param("id");
  if (identityIdDefect(id))
    return answer(badgeSvg("passport", "malformed id", COLOURS.grey), 400, cacheHeaders("stable"));
  const found = await lookUp(c.env.SNAPSHOTS, id);
  const tagged = { ...cacheHeaders("identity"), "cache-tag": identityCacheTag(id) };
  if (found.kind === "unknown") return answer(badgeSvg("passport", "not found", COLOURS.grey), 404, tagged);
  if (found.kind === "unavailable") {
    return answer(badgeSvg("passport", "unavailable", COLOURS.grey), 503, {
      ...cacheHeaders("none"),
      "retry-after": "5",
    });
  }
  // Validated against PassportRecord when it was published; parsing is all the badge needs.
  const record = JSON.parse(found.snapshot.body) as PassportRecord;
  const lifecycle = record.state.lifecycle;
  const verified = primaryVerified(record, Date.now());
  const message = `${lifecycle} · ${verified ? "verified" : "not verified"}`;
  const colour = lifecycle !== "active" ? COLOURS.bad : verified ? COLOURS.ok : COLOURS.warn;
  return answer(badgeSvg(FAMILY_WORDS[record.family], message, colour), 200, tagged);
});
