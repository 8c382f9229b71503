// The status route (docs/freshness.md, Status token): the resolver answers a short-lived token
// signed with the record key, read from the passport's publication sequencer, never from KV.
import { env } from "cloudflare:workers";
import {
  mintIdentityId,
  type PassportStatus,
  StatusAnswer,
  PassportStatus as StatusSchema,
  snapshotKey,
} from "@passport/domain";
import { compactVerify, decodeProtectedHeader, importJWK } from "jose";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import { drainOutbox } from "../../workers/control/src/publication/publish.ts";
import { withSequencerEnv } from "../support/publication-sequencer.ts";
import { shardOfIdentity } from "../support/shards.ts";
import { Owner, pinnedKeys, resolverFetch } from "./support.ts";

const statusOf = (id: string, headers: Record<string, string> = {}) =>
  resolverFetch(`http://resolver.test/api/p/${id}/status`, { headers });

/** Checks the token's signature with the pinned key it names, and returns its header and claims. */
async function verified(token: string): Promise<{ header: Record<string, unknown>; claims: PassportStatus }> {
  const header = decodeProtectedHeader(token);
  const jwk = pinnedKeys().keys.find((key) => key.kid === header.kid);
  if (!jwk) throw new Error(`no pinned key ${header.kid}`);
  const { payload } = await compactVerify(token, await importJWK(jwk, "ES256"));
  return { header, claims: StatusSchema.parse(JSON.parse(new TextDecoder().decode(payload))) };
}

async function tokenOf(id: string) {
  const response = await statusOf(id);
  expect(response.status).toBe(200);
  expect(response.headers.get("cache-control")).toBe("no-store");
  const body = StatusAnswer.parse(await response.json());
  expect(body.identity_id).toBe(id);
  return verified(body.token);
}

const failingKv = {
  ...env.SNAPSHOTS,
  put: async () => {
    throw new Error("KV unavailable");
  },
} as unknown as KVNamespace;

describe("GET /api/p/{id}/status", () => {
  it("states a published passport's version, digest and lifecycle, signed with the record key, valid for a minute", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const record = (await (await resolverFetch(`http://resolver.test/api/p/${id}.json`)).json()) as {
      record_version: number;
      digest: string;
    };
    const before = Math.floor(Date.now() / 1000);
    const { header, claims } = await tokenOf(id);
    expect(header).toMatchObject({ alg: "ES256", typ: "passport-status+jwt", kid: JSON.parse(env.SIGNING_KEY).kid });
    expect(claims).toMatchObject({
      identity_id: id,
      family: "api",
      lifecycle: "active",
      publication: "published",
      record_version: record.record_version,
      digest: record.digest,
    });
    expect(claims.pending_version).toBeUndefined();
    expect(claims.iat).toBeGreaterThanOrEqual(before - 1);
    expect(claims.exp - claims.iat).toBe(60);
  });

  it("answers alike without the router (plain GET) and through it (percent-encoded id, HEAD)", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const plain = await statusOf(id);
    const routed = await statusOf(id.replace("_", "%5F"));
    for (const response of [plain, routed]) {
      expect(response.status).toBe(200);
      expect(Object.fromEntries(response.headers)).toEqual(Object.fromEntries(plain.headers));
      expect(StatusAnswer.parse(await response.json()).identity_id).toBe(id);
    }
    const head = await resolverFetch(`http://resolver.test/api/p/${id}/status`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    // A trailing slash or a deeper path is not the status route, whichever way it is read.
    expect((await resolverFetch(`http://resolver.test/api/p/${id}/status/`)).status).toBe(404);
    expect((await resolverFetch(`http://resolver.test/api/p/x/${id}/status`)).status).toBe(404);
  });

  it("states a revocation at once, from the sequencer, not from what KV holds", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    await tokenOf(id); // the object now holds the state in memory
    await owner.state(id, { lifecycle: "revoked", reason: "key compromise" });
    const { claims } = await tokenOf(id);
    expect(claims).toMatchObject({ lifecycle: "revoked", publication: "published", record_version: 2 });

    // Whatever KV holds (a copy from before, as an edge or a lagging replica would serve it), the token does not move.
    const stale = await env.SNAPSHOTS.getWithMetadata(snapshotKey(id), "text");
    await env.SNAPSHOTS.put(snapshotKey(id), (stale.value ?? "").replace('"revoked"', '"active"'), {
      metadata: stale.metadata,
    });
    expect((await tokenOf(id)).claims).toMatchObject({ lifecycle: "revoked", record_version: 2 });
  });

  it("states pending, with the retry time, while a change's publication is owed; then published", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    await withSequencerEnv(id, { SNAPSHOTS: failingKv }, () =>
      owner.state(id, { lifecycle: "suspended", reason: "investigation" }),
    );
    const { claims } = await tokenOf(id);
    expect(claims).toMatchObject({
      lifecycle: "suspended",
      publication: "pending",
      record_version: 1,
      pending_version: 2,
    });
    const row = await (await shardOfIdentity(id))
      .prepare("SELECT next_attempt_at FROM outbox WHERE passport_id = ?")
      .bind(id)
      .first<{ next_attempt_at: string }>();
    expect(row).not.toBeNull();
    expect(Number.isNaN(Date.parse(row?.next_attempt_at ?? ""))).toBe(false);
    expect(row?.next_attempt_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    expect(claims.next_attempt_at).toBe(row?.next_attempt_at);

    await drainOutbox(env, new Date(Date.now() + 60_000));
    expect((await tokenOf(id)).claims).toMatchObject({ publication: "published", record_version: 2 });
  });

  it("tells an issued passport whose first publication is pending from an id never issued", async () => {
    const owner = await Owner.create();
    // The create request's call to the sequencer fails, as in a deploy: the outbox owes version 1.
    const sequencers = {
      getByName: () => ({
        publish: () => Promise.reject(new Error("sequencer reset")),
      }),
    } as unknown as typeof env.PUBLICATION_SEQUENCER;
    const created = await app.request(
      "http://control.test/v1/passports",
      {
        method: "POST",
        headers: { authorization: `Bearer ${owner.caller.token}`, "content-type": "application/json" },
        body: JSON.stringify({ family: "agent", organisation_id: owner.organisation, display_name: "Pending agent" }),
      },
      { ...env, PUBLICATION_SEQUENCER: sequencers },
    );
    expect(created.status).toBe(201);
    const { identity_id: id, publication } = (await created.json()) as {
      identity_id: string;
      publication: { status: string };
    };
    expect(publication.status).toBe("pending");
    expect((await resolverFetch(`http://resolver.test/api/p/${id}.json`)).status).toBe(404);

    const { claims } = await tokenOf(id);
    expect(claims).toMatchObject({ identity_id: id, family: "agent", publication: "pending", pending_version: 1 });
    expect(claims.record_version).toBeUndefined();
    expect(claims.digest).toBeUndefined();

    const never = await statusOf(mintIdentityId());
    expect(never.status).toBe(404);
    expect(never.headers.get("cache-control")).toBe("no-store");
    expect(await never.json()).toMatchObject({ type: "urn:svc:passport:problem:identity-not-found" });
  });

  it("refuses a malformed id without asking any sequencer", async () => {
    const response = await statusOf("psp_not-an-id");
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: "urn:svc:passport:problem:malformed-identity-id" });
  });

  it("limits each client address, and only that address", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const address = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    // The local binding's windows follow the wall clock: a run that straddles a boundary is let
    // through up to twice the limit before it is refused, and every answer before that is a 200.
    let accepted = 0;
    let refused: Response | undefined;
    for (; accepted <= 240; accepted++) {
      const response = await statusOf(id, { "cf-connecting-ip": address });
      if (response.status === 429) {
        refused = response;
        break;
      }
      expect(response.status).toBe(200);
      await response.body?.cancel();
    }
    expect(accepted).toBeGreaterThanOrEqual(120);
    if (!refused) throw new Error("no 429 within twice the limit");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(refused.headers.get("cache-control")).toBe("no-store");
    expect((await statusOf(id, { "cf-connecting-ip": "203.0.113.7" })).status).toBe(200);
  });
});
