import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { shardsOf } from "../../workers/control/src/db/shards.ts";
import { developmentToken } from "../support/tokens.ts";
import { api, deliver, freshAccountId, handoff, subscribe } from "./support.ts";

// The marketplace's tables are shard 0's and refer to organisations and passports by foreign key,
// so what a set-up makes is placed in shard 0 and registered in the directory (docs/sharding.md).

const shards = shardsOf(env);

interface ClaimView {
  account: { organisation_id: string; parent_organisation_id: string } | null;
  passport: { identity_id: string } | null;
}

/** A subscription processed by the consumer, ready to claim. */
async function processed() {
  const handed = await handoff((await subscribe({ customer_aws_account_id: freshAccountId() })).registration_token);
  expect(await deliver(handed.message)).toMatchObject({ acked: true });
  return handed;
}

function claimInto(token: string, acquisitionId: string, claimReference: string, organisationId?: string) {
  return api(token, "POST", `/v1/acquisitions/${acquisitionId}/claim`, {
    claim_reference: claimReference,
    ...(organisationId ? { organisation_id: organisationId } : {}),
  });
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

  it("refuses to link an organisation kept in another shard (crosses-shards), and nothing is set up", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const organisationId = `org_shard1_${crypto.randomUUID().slice(0, 8)}`;
    expect(await shards.placeOrganisation(organisationId, { shard: 1 })).toBe(1);
    const shardOne = shards.bindings[1] as D1Database;
    await shardOne.batch([
      shardOne.prepare("INSERT INTO organisations (id, name) VALUES (?, 'Shard 1 customer')").bind(organisationId),
      shardOne
        .prepare("INSERT INTO members (organisation_id, subject, role) VALUES (?, ?, 'owner')")
        .bind(organisationId, subject),
    ]);
    const { acquisitionId, claimReference } = await processed();
    const user = await developmentToken({ subject });
    const refused = await claimInto(user, acquisitionId, claimReference, organisationId);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ type: "urn:svc:passport:problem:crosses-shards" });
    const accounts = await env.DB.prepare("SELECT count(*) AS n FROM marketplace_accounts WHERE organisation_id = ?")
      .bind(organisationId)
      .first<{ n: number }>();
    expect(accounts?.n).toBe(0);

    // Someone who is not its owner or admin learns nothing of where it is.
    const stranger = await developmentToken();
    const forbidden = await claimInto(stranger, acquisitionId, claimReference, organisationId);
    expect(forbidden.status).toBe(403);
  });
});
