import { env } from "cloudflare:workers";
import { type FeedEntry, mintIdentityId, PROBLEM_TYPE_BASE, type SignedHistoryEntry } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { KeyRing, verifyDetachedJws } from "../../packages/verifier/src/index.ts";
import { type Body, Caller } from "../support/api.ts";
import { shardOfIdentity } from "../support/shards.ts";

const BASE = "http://resolver.test";
const get = (path: string, init?: RequestInit) => env.TEST_RESOLVER.fetch(`${BASE}${path}`, init);
const trustedKeys = () => JSON.parse(env.TEST_SIGNING_JWKS).keys;
const keyRing = () => new KeyRing(JSON.parse(env.TEST_SIGNING_JWKS));

/** A passport with `changes` published changes after its creation (so `changes + 1` versions). */
async function passportWithVersions(changes: number) {
  const owner = await Caller.create("owner");
  const { identity_id: id } = await owner.createPassport();
  for (let n = 0; n < changes; n++) {
    await owner.json("PATCH", `/v1/passports/${id}`, { display_name: `Version ${n + 2}` });
  }
  return { owner, id };
}

async function historyOf(id: string, query = ""): Promise<Body> {
  const response = await get(`/api/p/${id}/history.json${query}`);
  expect(response.status).toBe(200);
  return response.json();
}

describe("GET /.well-known/jwks.json", () => {
  it("serves the public signing keys, cacheable for five minutes, with nothing private", async () => {
    const response = await get("/.well-known/jwks.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/jwk-set+json");
    expect(response.headers.get("cache-control")).toBe("public, max-age=300");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    const body = await response.json<{ keys: Record<string, unknown>[] }>();
    expect(body.keys.map((k) => k.kid)).toEqual(trustedKeys().map((k: { kid: string }) => k.kid));
    // The record key (EC P-256) and the change notifications' key (Ed25519, docs/events.md): each
    // with exactly its public members.
    const publicMembers = {
      EC: ["alg", "crv", "kid", "kty", "use", "x", "y"],
      OKP: ["alg", "crv", "kid", "kty", "use", "x"],
    };
    expect(body.keys.map((k) => `${k.kty}/${k.crv}`).sort()).toEqual(["EC/P-256", "OKP/Ed25519"]);
    for (const key of body.keys) {
      expect(Object.keys(key).sort()).toEqual(publicMembers[key.kty as keyof typeof publicMembers]);
    }

    const etag = response.headers.get("etag") ?? "";
    const again = await get("/.well-known/jwks.json", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
  });
});

describe("the record's signature beside the record", () => {
  it("GET and HEAD carry Passport-Signature, exposed to script, verifying over the body as served", async () => {
    const { id } = await passportWithVersions(0);
    const response = await get(`/api/p/${id}.json`);
    const body = await response.text();
    const signature = response.headers.get("passport-signature") ?? "";
    expect(signature).toMatch(/^[\w-]+\.\.[\w-]+$/);
    expect(response.headers.get("access-control-expose-headers")).toBe("ETag, Passport-Signature, Passport-Log-Index");
    expect(await verifyDetachedJws(signature, JSON.parse(body), keyRing())).toMatchObject({
      valid: true,
    });
    const head = await get(`/api/p/${id}.json`, { method: "HEAD" });
    expect(head.headers.get("passport-signature")).toBe(signature);
  });
});

describe("GET /api/p/{id}/history.json", () => {
  it("lists every published version in order, signed and chained, page by page", async () => {
    const { id } = await passportWithVersions(4);
    const all = await historyOf(id);
    const entries = all.entries as SignedHistoryEntry[];
    expect(entries.map((e) => e.record_version)).toEqual([1, 2, 3, 4, 5]);
    expect(all.next).toBeUndefined();
    expect(entries[0]?.change_kinds).toEqual(["passport.created"]);
    for (const [i, { signature, ...entry }] of entries.entries()) {
      expect(entry.identity_id).toBe(id);
      if (i > 0) expect(entry.previous_digest).toBe(entries[i - 1]?.digest);
      expect((await verifyDetachedJws(signature, entry, keyRing())).valid).toBe(true);
    }
    const current = await (await get(`/api/p/${id}.json`)).json<Body>();
    expect(entries.at(-1)?.digest).toBe(current.digest);

    const first = await historyOf(id, "?limit=2");
    expect(first.entries.map((e: SignedHistoryEntry) => e.record_version)).toEqual([1, 2]);
    expect(first.next).toBe(`${BASE}/api/p/${id}/history.json?after=2&limit=2`);
    const second = await historyOf(id, "?after=2&limit=2");
    expect(second.entries).toEqual(entries.slice(2, 4));
    const last = await historyOf(id, "?after=4&limit=2");
    expect(last.entries).toEqual(entries.slice(4));
    expect(last.next).toBeUndefined();
    expect((await historyOf(id, "?after=5")).entries).toEqual([]);
  });

  it("keeps a retired passport's history, with the retirement as its last version", async () => {
    const { owner, id } = await passportWithVersions(1);
    await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "retired" });
    const { entries } = await historyOf(id);
    expect(entries.map((e: SignedHistoryEntry) => e.record_version)).toEqual([1, 2, 3]);
    expect(entries.at(-1).change_kinds).toEqual(["state.lifecycle_changed"]);
  });

  it("answers like the record route for a malformed or unknown id, and refuses a bad cursor", async () => {
    const malformed = await get("/api/p/psp_nope/history.json");
    expect(malformed.status).toBe(400);
    expect((await malformed.json<Body>()).type).toBe(`${PROBLEM_TYPE_BASE}malformed-identity-id`);
    const unknown = await get(`/api/p/${mintIdentityId()}/history.json`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json<Body>()).type).toBe(`${PROBLEM_TYPE_BASE}identity-not-found`);
    const { id } = await passportWithVersions(0);
    for (const query of ["?after=-1", "?after=1.5", "?limit=0", "?limit=1001", "?after=x"]) {
      const response = await get(`/api/p/${id}/history.json${query}`);
      expect(response.status, query).toBe(400);
      expect((await response.json<Body>()).type).toBe(`${PROBLEM_TYPE_BASE}invalid-request`);
    }
  });
});

describe("GET /api/feed.json", () => {
  it("lists each publication once, in sequence order, with nothing but the feed members", async () => {
    const { id } = await passportWithVersions(2);
    // A publication's feed position is its transparency-log index plus one (docs/signing.md).
    const mine = await (await shardOfIdentity(id))
      .prepare("SELECT log_index + 1 AS seq FROM publications WHERE passport_id = ? ORDER BY record_version")
      .bind(id)
      .all<{ seq: number }>();
    const seqs = mine.results.map((r) => r.seq);
    expect(seqs).toHaveLength(3);
    const first = seqs[0] as number;
    const response = await get(`/api/feed.json?after=${first - 1}&limit=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=15");
    const page = await response.json<{ entries: FeedEntry[]; next: string; more: boolean }>();
    expect(page.entries).toHaveLength(1);
    expect(Object.keys(page.entries[0] ?? {}).sort()).toEqual([
      "digest",
      "identity_id",
      "published_at",
      "record_version",
      "seq",
    ]);
    expect(page.entries[0]).toMatchObject({ seq: first, identity_id: id, record_version: 1 });
    expect(page.more).toBe(true);
    expect(page.next).toBe(`${BASE}/api/feed.json?after=${first}&limit=1`);

    // Follow the cursor until every publication of this passport has been seen, in order.
    const seen: FeedEntry[] = [];
    let next: string | undefined = `${BASE}/api/feed.json?after=${first - 1}&limit=2`;
    while (next && seen.filter((e) => e.identity_id === id).length < 3) {
      const answer: { entries: FeedEntry[]; next: string } = await (await env.TEST_RESOLVER.fetch(next)).json();
      expect(answer.entries.length).toBeGreaterThan(0);
      seen.push(...answer.entries);
      next = answer.next;
    }
    const ordered = seen.map((e) => e.seq);
    expect(ordered).toEqual([...ordered].sort((a, b) => a - b));
    expect(new Set(ordered).size).toBe(ordered.length);
    expect(seen.filter((e) => e.identity_id === id).map((e) => e.record_version)).toEqual([1, 2, 3]);
  });

  it("refuses a bad cursor or limit", async () => {
    for (const query of ["?after=-1", "?limit=101", "?limit=0", "?after=abc"]) {
      const response = await get(`/api/feed.json${query}`);
      expect(response.status, query).toBe(400);
    }
  });
});
