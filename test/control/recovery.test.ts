import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { recoverySql, shardLookupSql } from "../../scripts/recovery-sql.mjs";
import { Caller, resolve } from "../support/api.ts";
import { everyShard } from "../support/shards.ts";
import { developmentToken } from "../support/tokens.ts";

/**
 * Runs the recovery exactly as `npm run recover-owner` hands it to `wrangler d1 execute`: on the
 * shard the directory names for the organisation (shard 0 for one it does not know).
 */
async function recover(input: Parameters<typeof recoverySql>[0]) {
  const placed = await env.DIRECTORY?.prepare(shardLookupSql(input.organisation)).first<{ shard: number }>();
  const shard = everyShard()[placed?.shard ?? 0] as D1Database;
  await shard.batch(recoverySql(input).map((statement) => shard.prepare(statement)));
}

async function asSubject(subject: string) {
  // A token without an organisation claim: the caller has only the memberships D1 holds.
  return new Caller(await developmentToken({ subject }), subject, "");
}

describe("operator-run owner recovery", () => {
  it("gives a sole owner's new subject ownership, records who approved it, and keeps everything else", async () => {
    const lost = await Caller.create("owner");
    const holding = await lost.json("POST", "/v1/organisations", { name: "Example Holdings" }, 201);
    await lost.json("PATCH", `/v1/organisations/${lost.organisation}`, { parent_id: holding.id });
    const passport = await lost.createPassport();
    const before = (await resolve(passport.identity_id)).record;

    const newSubject = `user-${crypto.randomUUID()}`;
    const stranger = await asSubject(newSubject);
    expect((await stranger.request("GET", `/v1/organisations/${lost.organisation}`)).status).toBe(404);

    await recover({
      organisation: lost.organisation,
      subject: newSubject,
      approvedBy: "ops-alice",
      reason: "Ticket 4711: identity provider re-issued the owner's account",
    });

    const recovered = await stranger.json("GET", `/v1/organisations/${lost.organisation}`);
    expect(recovered.role).toBe("owner");
    expect(recovered.parent).toEqual({ id: holding.id, name: "Example Holdings" });
    expect(recovered.history[0]).toMatchObject({
      kind: "organisation.recovered",
      actor: "operator:ops-alice",
      detail: { new_owner: newSubject, approved_by: "ops-alice", reason: expect.stringContaining("4711") },
    });
    // The organisation, its parent and its passports are preserved: same ids, same record.
    const after = await stranger.json("GET", `/v1/passports/${passport.identity_id}`);
    expect(after.identity_id).toBe(passport.identity_id);
    expect((await resolve(passport.identity_id)).record).toEqual(before);
    // The recovered owner can act, including removing the lost subject.
    expect(
      (await stranger.request("DELETE", `/v1/organisations/${lost.organisation}/members/${lost.subject}`)).status,
    ).toBe(204);
  });

  it("changes nothing for an unknown organisation and refuses input that is not an id", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    await recover({ organisation: "org_does_not_exist", subject, approvedBy: "ops-alice", reason: "test" });
    for (const shard of everyShard()) {
      const rows = await shard
        .prepare("SELECT count(*) AS n FROM members WHERE subject = ?")
        .bind(subject)
        .first<{ n: number }>();
      expect(rows?.n).toBe(0);
    }
    expect(() =>
      recoverySql({ organisation: "org'; DROP TABLE members; --", subject, approvedBy: "ops", reason: "x" }),
    ).toThrow(/--org/);
    expect(() => recoverySql({ organisation: "org_a", subject, approvedBy: "", reason: "x" })).toThrow(/approved-by/);
    expect(() => recoverySql({ organisation: "org_a", subject, approvedBy: "ops", reason: "" })).toThrow(/reason/);
    // A reason with quotes is data, not SQL.
    const owner = await Caller.create("owner");
    await recover({ organisation: owner.organisation, subject, approvedBy: "ops", reason: "it's 'quoted'" });
    const history = await owner.json("GET", `/v1/organisations/${owner.organisation}`);
    expect(history.history[0].detail.reason).toBe("it's 'quoted'");
  });

  it("spec 5.2: guides the recovered owner to confirm the estate and re-check each passport in the Resolver", async () => {
    const lost = await Caller.create("owner");
    const passport = await lost.createPassport({ display_name: "Recovered API" });
    const newSubject = `user-${crypto.randomUUID()}`;
    const recovered = await asSubject(newSubject);
    await recover({
      organisation: lost.organisation,
      subject: newSubject,
      approvedBy: "ops-bob",
      reason: "Ticket 4712: new sign-in after the identity provider moved",
    });

    const view = await recovered.json("GET", `/v1/organisations/${lost.organisation}`);
    expect(view.after_recovery).toMatchObject({
      recovered_at: view.history[0].at,
      more_passports: false,
      passports: [
        {
          identity_id: passport.identity_id,
          display_name: "Recovered API",
          lifecycle: "active",
          dashboard_url: `/dashboard/passports/${passport.identity_id}`,
          resolver_url: `${env.RESOLVER_BASE_URL}/p/${passport.identity_id}`,
          machine_json_url: `${env.RESOLVER_BASE_URL}/api/p/${passport.identity_id}.json`,
        },
      ],
    });
    expect(view.after_recovery.steps.join(" ")).toMatch(/intended estate[\s\S]*Re-check each passport in the Resolver/);
    // The machine JSON it links to answers the passport the estate lists.
    expect((await resolve(passport.identity_id)).record.identity_id).toBe(passport.identity_id);

    // The Dashboard's organisation page shows the notice with the Resolver links.
    const page = await (
      await exports.default.fetch(`http://control.test/dashboard/organisations/${lost.organisation}`, {
        headers: { "cf-access-jwt-assertion": recovered.token },
      })
    ).text();
    expect(page).toContain('id="after-recovery"');
    expect(page).toContain(`${env.RESOLVER_BASE_URL}/p/${passport.identity_id}`);

    // Only for the recovered owner: the other members see no such guidance.
    const other = await lost.json("GET", `/v1/organisations/${lost.organisation}`);
    expect(other.after_recovery).toBeNull();
  });
});
