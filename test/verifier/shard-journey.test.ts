import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { moveOrganisation } from "../../workers/control/src/db/organisation-move.ts";
import { hashedShard, shardsOf } from "../../workers/control/src/db/shards.ts";
import { type Body, Caller, resolve } from "../support/api.ts";
import { verifiedManifest } from "../support/control-fixtures.ts";
import { freshOrganisation } from "../support/tokens.ts";
import { verifierFor } from "./support.ts";

// One passport's life in the second shard, end to end (docs/sharding.md): everything a user and a
// consumer do with it works the same as in shard 0, an organisation in the other shard cannot
// claim what it proved, and a move to the other shard keeps all of it.

const shards = shardsOf(env);
const [shardZero, shardOne] = shards.bindings as [D1Database, D1Database];

/** A new organisation id the hash places in `shard` (for a newcomer, who has no other organisation). */
function organisationIn(shard: number): string {
  for (;;) {
    const id = freshOrganisation();
    if (hashedShard(id, shards.count) === shard) return id;
  }
}

async function rowsIn(d1: D1Database, identityId: string): Promise<number> {
  return (
    (await d1.prepare("SELECT count(*) AS n FROM passports WHERE id = ?1").bind(identityId).first<number>("n")) ?? 0
  );
}

describe("a passport kept in the second shard", () => {
  it("is resolved, verified, found by search, protected from a claim made from the other shard, and moved with its organisation", async () => {
    const owner = await Caller.create("owner", organisationIn(1));
    expect((await shards.placementOf(owner.organisation)).shard).toBe(1);
    const { id, manifest } = await verifiedManifest(owner, { display_name: "Ledger reconciliation agent" });
    // Its rows are in shard 1 only, and the directory knows whose it is.
    expect(await shards.organisationOfIdentity(id)).toBe(owner.organisation);
    expect([await rowsIn(shardZero, id), await rowsIn(shardOne, id)]).toEqual([0, 1]);

    // Resolved and verified as any other passport.
    const resolved = await resolve(id);
    expect(resolved.status).toBe(200);
    expect(resolved.record.bindings).toEqual([
      expect.objectContaining({
        class: "manifest",
        value: manifest,
        verification: expect.objectContaining({ state: "verified" }),
      }),
    ]);
    const verdict = await verifierFor().verify(id, { family: "agent" });
    expect(verdict.outcome).toBe("ok");

    // Found by its organisation's search.
    const search = async () =>
      (
        await owner.json<{ items: Body[] }>(
          "GET",
          `/v1/passports?organisation_id=${owner.organisation}&q=${encodeURIComponent("reconciliation")}`,
        )
      ).items.map((p) => p.identity_id);
    expect(await search()).toEqual([id]);

    // An organisation in the other shard cannot claim the manifest this one proved.
    const rival = await Caller.create("owner", organisationIn(0));
    expect((await shards.placementOf(rival.organisation)).shard).toBe(0);
    const claim = await rival.request("POST", "/v1/passports", {
      organisation_id: rival.organisation,
      family: "agent",
      display_name: "Claimed elsewhere",
      bindings: [{ class: "manifest", value: manifest }],
    });
    expect(claim.status).toBe(409);
    expect(await claim.json()).toMatchObject({
      type: "urn:svc:passport:problem:duplicate-identity",
      existing_identity_id: id,
      verified_holder: { identity_id: id, organisation_id: owner.organisation },
    });

    // Moved to shard 0 with its organisation: same id, same record, still found, still changeable.
    // The API's isolate remembers shard 1 for list pages from the search just made (nothing told it
    // of the move), as any other isolate of the service would: its pages and writes still find it.
    expect(await search()).toEqual([id]);
    const before = (await resolve(id)).record;
    const report = await moveOrganisation(shards, owner.organisation, 0);
    expect(report).toMatchObject({ from: 1, to: 0 });
    expect([await rowsIn(shardZero, id), await rowsIn(shardOne, id)]).toEqual([1, 0]);
    expect((await resolve(id)).record).toEqual(before);
    expect((await verifierFor().verify(id, { family: "agent" })).outcome).toBe("ok");
    expect(await search()).toEqual([id]);
    const renamed = await owner.json("PATCH", `/v1/passports/${id}`, { display_name: "Ledger agent, moved" });
    expect(renamed.record_version).toBe(before.record_version + 1);
    expect(await rowsIn(shardOne, id)).toBe(0);
    expect((await resolve(id)).record.display_name).toBe("Ledger agent, moved");
    // The claim is still refused after the move.
    const again = await rival.request("POST", "/v1/passports", {
      organisation_id: rival.organisation,
      family: "agent",
      bindings: [{ class: "manifest", value: manifest }],
    });
    expect(again.status).toBe(409);
  });
});
