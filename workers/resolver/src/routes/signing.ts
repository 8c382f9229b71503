import { problem } from "@passport/domain";
import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_ETAG_HEADERS, ifNoneMatch, problemAnswer, textEntityTag } from "../http.ts";

/**
 * The public members of an EC signing key (records) or an OKP one (the Ed25519 key of change
 * notifications, docs/events.md). Anything else in SIGNING_JWKS (above all a private `d` pasted
 * by mistake) is never served.
 */
const PUBLIC_MEMBERS = ["kty", "crv", "x", "y", "kid", "alg", "use"] as const;

/**
 * Five minutes: a rotation waits this long between listing a new key and signing with it
 * (docs/signing.md), so every verifier that refreshes from here knows the key in time.
 */
const JWKS_MAX_AGE_SECONDS = 300;
const JWKS_CACHE = { "cache-control": `public, max-age=${JWKS_MAX_AGE_SECONDS}` };

interface KeySetAnswer {
  text: string;
  etag: string;
}

let memo: { source: string; answer: KeySetAnswer | null } | undefined;

/** The served key set, derived once per isolate from the SIGNING_JWKS variable; null when it is unusable. */
function keySet(source: string): KeySetAnswer | null {
  if (memo?.source === source) return memo.answer;
  let answer: KeySetAnswer | null = null;
  try {
    const parsed = JSON.parse(source) as { keys?: unknown };
    if (Array.isArray(parsed.keys)) {
      const keys = parsed.keys.map((key: Record<string, unknown>) =>
        Object.fromEntries(PUBLIC_MEMBERS.filter((m) => key[m] !== undefined).map((m) => [m, key[m]])),
      );
      const text = JSON.stringify({ keys });
      answer = { text, etag: textEntityTag(text) };
    }
  } catch {
    answer = null;
  }
  memo = { source, answer };
  return answer;
}

export const signing = new Hono<{ Bindings: Env }>();

/**
 * `GET /.well-known/jwks.json`: the public keys that verify record and history signatures, the
 * current key and any previous key still trusted. Verifiers should pin a copy rather than fetch
 * it next to the record they check.
 */
signing.get("/jwks.json", (c) => {
  const answer = keySet(c.env.SIGNING_JWKS);
  if (!answer) {
    console.error(JSON.stringify({ level: "error", event: "signing_jwks_unusable" }));
    return problemAnswer(
      problem("unavailable", { detail: "The resolver's signing keys are not configured; try again later." }),
      { ...cacheHeaders("none"), "retry-after": "60" },
    );
  }
  const headers = { ...CORS_ETAG_HEADERS, ...JWKS_CACHE, etag: answer.etag };
  if (ifNoneMatch(c.req.header("if-none-match") ?? null, answer.etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(answer.text, { headers: { ...headers, "content-type": "application/jwk-set+json" } });
});
