import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { shardsOf } from "../../workers/control/src/db/shards.ts";
import { developmentToken } from "../support/tokens.ts";
import { api, claimInto, processed } from "./support.ts";

// The marketplace's tables are shard 0's and refer to organisations and passports by foreign key,
// so what a set-up makes is placed in shard 0 and registered in the directory (docs/sharding.md).

const shards = shardsOf(env);

interface ClaimView {
  account: { organisation_id: string; parent_organisation_id: string } | null;
  passport: { identity_id: string } | null;
}

describe("marketplace set-up across shards", { timeout: 30_000 }, () => {
  it("places the organisations it makes in shard 0 and registers the passport it issues", async () => {
    const { acquisitionId, claimReference } = await processed();
    const claimed = await claimInto(await developmentToken(), acquisitionId, claimReference);
    expect(claimed.status).toBe(200);
    const { account, passport } = await claimed.json<ClaimView>();
    if (!account || !passport) throw new Error("the claim set up no account or passport");

    for (const organisationId of [account.organisation_id, account.parent_organisation_id]) {
      expect(await shards.placementOf(organisationId)).toEqual({ shard: 0, movingTo: null, known: true });
    }
    expect(await shards.organisationOfIdentity(passport.identity_id)).toBe(account.organisation_id);
    const row = await env.DB.prepare("SELECT organisation_id FROM passports WHERE id = ?")
      .bind(passport.identity_id)
      .first();
    expect(row).toEqual({ organisation_id: account.organisation_id });
  });

  /** An organisation the directory keeps in shard 1, owned by `subject`, made through the API. */
  async function organisationInShardOne(subject: string) {
    const organisationId = `org_shard1_${crypto.randomUUID().slice(0, 8)}`;
    expect(await shards.placeOrganisation(organisationId, { shard: 1 })).toBe(1);
    const owner = await developmentToken({ subject, organisation: organisationId, role: "owner" });
    const created = await api(owner, "POST", "/v1/passports", {
      organisation_id: organisationId,
      family: "api",
      display_name: "Shard 1 customer's API",
    });
    expect(created.status).toBe(201);
    const { identity_id: passportId } = await created.json<{ identity_id: string }>();
    return { organisationId, passportId, owner };
  }

  it("moves a standalone organisation kept in another shard to shard 0 and links it, its passport adopted", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const { organisationId, passportId } = await organisationInShardOne(subject);
    const { acquisitionId, claimReference } = await processed();
    const user = await developmentToken({ subject });

    // Someone who is not its owner or admin learns nothing of where it is, and nothing moves.
    const forbidden = await claimInto(await developmentToken(), acquisitionId, claimReference, organisationId);
    expect(forbidden.status).toBe(403);
    expect((await shards.placementOf(organisationId)).shard).toBe(1);

    const claimed = await claimInto(user, acquisitionId, claimReference, organisationId);
    expect(claimed.status).toBe(200);
    const view = await claimed.json<ClaimView>();
    expect(view.account).toMatchObject({ organisation_id: organisationId, parent_organisation_id: organisationId });
    expect(view.passport?.identity_id).toBe(passportId);
    expect((await shards.placementOf(organisationId)).shard).toBe(0);
    const count = (d1: D1Database, sql: string) => d1.prepare(sql).bind(organisationId).first<number>("n");
    expect(await count(env.DB, "SELECT count(*) AS n FROM passports WHERE organisation_id = ?")).toBe(1);
    expect(
      await count(shards.bindings[1] as D1Database, "SELECT count(*) AS n FROM passports WHERE organisation_id = ?"),
    ).toBe(0);
    expect(await count(env.DB, "SELECT count(*) AS n FROM marketplace_accounts WHERE organisation_id = ?")).toBe(1);
  });

  it("refuses to link an organisation of another shard tied to others there (crosses-shards), and nothing moves", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const { organisationId, owner } = await organisationInShardOne(subject);
    const child = await api(owner, "POST", "/v1/organisations", { name: "Its team", parent_id: organisationId });
    expect(child.status).toBe(201);
    const { acquisitionId, claimReference } = await processed();
    const refused = await claimInto(await developmentToken({ subject }), acquisitionId, claimReference, organisationId);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ type: "urn:svc:passport:problem:crosses-shards" });
    expect((await shards.placementOf(organisationId)).shard).toBe(1);
    const accounts = await env.DB.prepare("SELECT count(*) AS n FROM marketplace_accounts WHERE organisation_id = ?")
      .bind(organisationId)
      .first<{ n: number }>();
    expect(accounts?.n).toBe(0);
  });
});
