// The verifier's current proof at higher consequence (docs/verifier.md, Current proof): a status
// token, stapled or fetched, checked offline against the pinned keys, must name the record relied on.
import { env } from "cloudflare:workers";
import { mintIdentityId, type SnapshotMetadata, snapshotKey } from "@passport/domain";
import { CompactSign, importJWK } from "jose";
import { describe, expect, it } from "vitest";
import { checkStatusToken, KeyRing, type VerifyOutcome } from "../../packages/verifier/src/index.ts";
import { app } from "../../workers/control/src/app.ts";
import { withSequencerEnv } from "../support/publication-sequencer.ts";
import { Owner, pinnedKeys, RESOLVER, recording, resolverFetch, verifierFor } from "./support.ts";

async function served(id: string): Promise<{ body: string; signature: string }> {
  const response = await resolverFetch(`${RESOLVER}/api/p/${id}.json`);
  return { body: await response.text(), signature: response.headers.get("passport-signature") ?? "" };
}

async function statusToken(id: string): Promise<string> {
  const response = await resolverFetch(`${RESOLVER}/api/p/${id}/status`);
  return ((await response.json()) as { token: string }).token;
}

const isStatusCall = (url: string) => url.endsWith("/status");

const failingKv = {
  ...env.SNAPSHOTS,
  put: async () => {
    throw new Error("KV unavailable");
  },
} as unknown as KVNamespace;

function expectNotOk(result: VerifyOutcome) {
  expect(result.ok).toBe(false);
  expect(result.outcome).not.toBe("ok");
}

describe("verify at higher consequence: current proof", () => {
  it("ok only with a fetched status token naming this record, and says since when it is current", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const { fetch, calls } = recording();
    const before = Date.now();
    const result = await verifierFor({ fetch }).verify(id, { family: "api", consequence: "higher" });
    expect(result).toMatchObject({ outcome: "ok", ok: true });
    expect(calls.filter((c) => isStatusCall(c.url))).toHaveLength(1);
    expect(Date.parse(result.current_as_of ?? "")).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    expect(result.proof?.status).toMatchObject({
      source: "fetched",
      kid: JSON.parse(env.SIGNING_KEY).kid,
      record_version: 1,
      publication: "published",
      lifecycle: "active",
    });

    // lower and changing keep their cached paths: no status request, no current_as_of.
    const lower = await verifierFor({ fetch }).verify(id, { family: "api" });
    expect(lower.outcome).toBe("ok");
    expect(lower.current_as_of).toBeUndefined();
    expect(calls.filter((c) => isStatusCall(c.url))).toHaveLength(1);
  });

  it("right after a revocation: never ok; the copy of the record from before it is stale (re-resolve)", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const before = await served(id);
    const beforeMetadata = (await env.SNAPSHOTS.getWithMetadata<SnapshotMetadata>(snapshotKey(id))).metadata;
    await owner.state(id, { lifecycle: "revoked", reason: "key compromise" });

    const now = await verifierFor().verify(id, { family: "api", consequence: "higher" });
    expect(now).toMatchObject({ outcome: "state_not_operative", state: { lifecycle: "revoked" } });

    // The record as a stale cache or a mirror would still serve it: validly signed, and stale.
    const fed = await verifierFor().verify(id, { family: "api", consequence: "higher", record: before });
    expect(fed).toMatchObject({
      outcome: "stale",
      next_step: "re-resolve",
      stale: [{ what: "status", problem: "record_superseded", current_version: 2 }],
      source: { supplied: true, attempts: 0 },
    });
    expect(fed.current_as_of).toBeUndefined();
    expect(fed.proof).toMatchObject({ signature: "verified", status: { lifecycle: "revoked", record_version: 2 } });

    // The same copy served by the resolver itself (a lagging KV read behind the edge): stale too.
    await env.SNAPSHOTS.put(snapshotKey(id), before.body, { metadata: beforeMetadata });
    const lagging = await verifierFor().verify(id, { family: "api", consequence: "higher" });
    expect(lagging).toMatchObject({ outcome: "stale", stale: [{ what: "status", problem: "record_superseded" }] });
    // At lower consequence the cached path still answers from what is served.
    expect((await verifierFor().verify(id, { family: "api" })).outcome).toBe("ok");
  });

  it("a stapled token is checked offline and spares the status request; an unusable one is replaced by a fetched one", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const token = await statusToken(id);
    const { fetch, calls } = recording();
    const stapled = await verifierFor({ fetch }).verify(id, { consequence: "higher", statusToken: token });
    expect(stapled).toMatchObject({ outcome: "ok", proof: { status: { source: "stapled" } } });
    expect(calls.filter((c) => isStatusCall(c.url))).toHaveLength(0);

    // Too old for the caller's bound, or about another passport: not relied on, a fresh one is fetched.
    const tooOld = await verifierFor({ fetch, now: () => Date.now() + 20_000 }).verify(id, {
      consequence: "higher",
      statusToken: token,
      statusMaxAge: "10s",
    });
    // (the fetched one is judged by the same clock, 20 s ahead: too old as well)
    expect(tooOld).toMatchObject({ outcome: "stale", stale: [{ what: "status", problem: "too_old" }] });
    expect(calls.filter((c) => isStatusCall(c.url))).toHaveLength(1);
    const other = await statusToken((await owner.apiPassport()).id);
    const refetched = await verifierFor({ fetch }).verify(id, { consequence: "higher", statusToken: other });
    expect(refetched).toMatchObject({ outcome: "ok", proof: { status: { source: "fetched" } } });
    expect(calls.filter((c) => isStatusCall(c.url))).toHaveLength(2);

    // A stapled token that names a newer record than the one fed: stale, without any status request.
    const before = await served(id);
    await owner.caller.json("PATCH", `/v1/passports/${id}`, { display_name: "Version 2" });
    const newer = await statusToken(id);
    const mismatch = await verifierFor({ fetch }).verify(id, {
      consequence: "higher",
      statusToken: newer,
      record: before,
    });
    expect(mismatch).toMatchObject({ outcome: "stale", stale: [{ problem: "record_superseded" }] });
    expect(calls.filter((c) => isStatusCall(c.url))).toHaveLength(2);
  });

  it("no current proof to be had is never ok: status route unreachable, refusing, or a token by an unpinned key", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const unreachable = await verifierFor({
      fetch: (input, init) =>
        isStatusCall(input) ? Promise.reject(new TypeError("connection refused")) : resolverFetch(input, init),
    }).verify(id, { consequence: "higher" });
    expect(unreachable).toMatchObject({ outcome: "network_failure", next_step: "delay" });
    expectNotOk(unreachable);

    const refusing = await verifierFor({
      fetch: (input, init) =>
        isStatusCall(input)
          ? Promise.resolve(new Response("{}", { status: 404, headers: { "content-type": "application/json" } }))
          : resolverFetch(input, init),
    }).verify(id, { consequence: "higher" });
    expect(refusing).toMatchObject({ outcome: "stale", stale: [{ what: "status", problem: "unavailable" }] });
    expectNotOk(refusing);

    // Signed with a key of someone else's, stapled and served alike.
    const { privateJwk } = await import("../../scripts/dev-keys.mjs").then((m) => m.signingKeyPair("ES256"));
    const foreignKey = JSON.parse(privateJwk);
    const claims = JSON.parse(atob((await statusToken(id)).split(".")[1]?.replace(/-/g, "+").replace(/_/g, "/") ?? ""));
    const forged = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: "ES256", kid: foreignKey.kid, typ: "passport-status+jwt" })
      .sign(await importJWK(foreignKey, "ES256"));
    const forgedServed = await verifierFor({
      fetch: (input, init) =>
        isStatusCall(input)
          ? Promise.resolve(Response.json({ identity_id: id, token: forged }))
          : resolverFetch(input, init),
    }).verify(id, { consequence: "higher", statusToken: forged });
    expect(forgedServed).toMatchObject({ outcome: "stale", stale: [{ what: "status", problem: "unknown_key" }] });
    expectNotOk(forgedServed);
  });

  it("checkStatusToken: signature, key, identity, expiry and age, checked with pinned keys alone", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const token = await statusToken(id);
    const ring = new KeyRing(pinnedKeys());
    const now = Date.now();
    expect(await checkStatusToken(token, ring, id, now, 30)).toMatchObject({ ok: true, claims: { identity_id: id } });
    expect(await checkStatusToken(token, new KeyRing({ keys: [] }), id, now, 30)).toMatchObject({
      ok: false,
      problem: "unknown_key",
    });
    const [header, payload, signature] = token.split(".");
    const flipped = `${header}.${payload}.${signature?.startsWith("A") ? "B" : "A"}${signature?.slice(1)}`;
    expect(await checkStatusToken(flipped, ring, id, now, 30)).toMatchObject({
      ok: false,
      problem: "signature_invalid",
    });
    expect((await checkStatusToken(token, ring, mintIdentityId(), now, 30)).ok).toBe(false);
    expect(await checkStatusToken(token, ring, id, now + 61_000, 120)).toMatchObject({ ok: false, problem: "expired" });
    expect(await checkStatusToken(token, ring, id, now + 31_000, 30)).toMatchObject({ ok: false, problem: "too_old" });
    // A record signature is never taken for a status token.
    const record = await served(id);
    expect(await checkStatusToken(record.signature, ring, id, now, 30)).toMatchObject({
      ok: false,
      problem: "malformed",
    });
  });

  it("a change whose publication is pending: stale with next step delay, naming the pending version", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    await withSequencerEnv(id, { SNAPSHOTS: failingKv }, () =>
      owner.state(id, { lifecycle: "suspended", reason: "investigation" }),
    );
    const result = await verifierFor().verify(id, { consequence: "higher" });
    expect(result).toMatchObject({
      outcome: "stale",
      next_step: "delay",
      stale: [{ what: "status", problem: "publication_pending", pending_version: 2, current_version: 1 }],
      proof: { status: { lifecycle: "suspended", publication: "pending" } },
    });
  });

  it("tells an issued passport whose first publication is pending (delay) from an id never issued (deny)", async () => {
    const owner = await Owner.create();
    const sequencers = {
      getByName: () => ({ publish: () => Promise.reject(new Error("sequencer reset")) }),
    } as unknown as typeof env.PUBLICATION_SEQUENCER;
    const created = await app.request(
      "http://control.test/v1/passports",
      {
        method: "POST",
        headers: { authorization: `Bearer ${owner.caller.token}`, "content-type": "application/json" },
        body: JSON.stringify({ family: "api", organisation_id: owner.organisation, display_name: "Pending API" }),
      },
      { ...env, PUBLICATION_SEQUENCER: sequencers },
    );
    const { identity_id: id } = (await created.json()) as { identity_id: string };
    const pending = await verifierFor().verify(id);
    expect(pending).toMatchObject({ outcome: "not_found", next_step: "delay", publication_pending: {} });
    expect(pending.ok).toBe(false);

    const never = await verifierFor().verify("psp_k03khmq2ren546nj2zrpdtsmdz");
    expect(never).toMatchObject({ outcome: "not_found", next_step: "deny" });
    expect(never).not.toHaveProperty("publication_pending");
  });
});
