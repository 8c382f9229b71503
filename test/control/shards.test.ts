import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  bindingValueKey,
  claimBinding,
  recordProof,
  releaseClaim,
  withdrawProof,
} from "../../workers/control/src/db/binding-index.ts";
import { MoveRefused, moveOrganisation } from "../../workers/control/src/db/organisation-move.ts";
import {
  hashedShard,
  OrganisationMoving,
  Shards,
  shardBindings,
  shardsOf,
} from "../../workers/control/src/db/shards.ts";
import { Caller, resolve, uniqueEndpoint } from "../support/api.ts";
import { loggedVersions } from "../support/log-entries.ts";
import { freshOrganisation } from "../support/tokens.ts";

const shards = shardsOf(env);
const directory = env.DIRECTORY as D1Database;
const shardOne = env.DB_SHARD_1 as D1Database;
const at = new Date();

/** An organisation id the hash places in `shard`. */
function organisationIn(shard: number): string {
  for (;;) {
    const id = freshOrganisation();
    if (hashedShard(id, shards.count) === shard) return id;
  }
}

/** Everything one shard holds of an organisation, ids and history included (not the search rows). */
async function organisationRows(d1: D1Database, organisationId: string) {
  const ofPassport = (column: string) => `${column} IN (SELECT id FROM passports WHERE organisation_id = ?1)`;
  const queries = {
    organisations: "SELECT * FROM organisations WHERE id = ?1",
    members: "SELECT * FROM members WHERE organisation_id = ?1 ORDER BY subject",
    passports: "SELECT * FROM passports WHERE organisation_id = ?1 ORDER BY id",
    bindings: `SELECT * FROM bindings WHERE ${ofPassport("passport_id")} ORDER BY id`,
    evidence: `SELECT * FROM evidence WHERE ${ofPassport("passport_id")} ORDER BY id`,
    // Each shard numbers its own history: the order and every other column are kept.
    events:
      "SELECT passport_id, actor, at, kind, detail, record_version FROM events WHERE organisation_id = ?1 ORDER BY seq",
    publications: `SELECT passport_id, record_version, digest, previous_digest, published_at, change_kinds, written_at, log_index
      FROM publications WHERE ${ofPassport("passport_id")} ORDER BY seq`,
    outbox: `SELECT * FROM outbox WHERE ${ofPassport("passport_id")} ORDER BY passport_id`,
  };
  const rows: Record<string, unknown[]> = {};
  for (const [table, sql] of Object.entries(queries)) {
    rows[table] = (await d1.prepare(sql).bind(organisationId).all()).results;
  }
  return rows;
}

describe("shards (docs/sharding.md)", () => {
  it("runs with two shards and the directory, and places new organisations in both by hash", async () => {
    expect(shards.count).toBe(2);
    const ids = Array.from({ length: 16 }, () => freshOrganisation());
    const placed = await Promise.all(ids.map((id) => shards.placeOrganisation(id, { at })));
    expect(new Set(placed)).toEqual(new Set([0, 1]));
    expect(placed).toEqual(ids.map((id) => hashedShard(id, 2)));
    // Racing placements of one organisation agree, and a placed organisation keeps its shard.
    const racing = organisationIn(1);
    expect(await Promise.all([1, 2, 3].map(() => shards.placeOrganisation(racing, { at })))).toEqual([1, 1, 1]);
    await directory.prepare("UPDATE organisation_shards SET shard = 0 WHERE organisation_id = ?1").bind(racing).run();
    expect(await shards.placeOrganisation(racing, { at })).toBe(0);
  });

  it("adds a shard: migrated and appended to the list, it takes new organisations; placed ones stay", async () => {
    const placedBefore = await Promise.all(
      [0, 1].map(async (shard) => {
        const id = organisationIn(shard);
        await shards.placeOrganisation(id, { at });
        return id;
      }),
    );
    // The documented step (docs/sharding.md): create the database, apply migrations/ to it, append
    // its binding to D1_SHARDS.
    await applyD1Migrations(env.DB_SHARD_2 as D1Database, env.TEST_MIGRATIONS);
    const widened = { ...env, D1_SHARDS: JSON.stringify([...JSON.parse(env.D1_SHARDS), "DB_SHARD_2"]) };
    const three = new Shards(shardBindings(widened), env.DIRECTORY);
    expect(three.count).toBe(3);
    for (const [shard, id] of placedBefore.entries()) {
      expect(await three.placeOrganisation(id, { at })).toBe(shard);
      expect(await three.forOrganisation(id)).toBe(three.shard(shard));
    }
    const fresh = Array.from({ length: 12 }, () => freshOrganisation());
    const placed = await Promise.all(fresh.map((id) => three.placeOrganisation(id, { at })));
    expect(new Set(placed)).toEqual(new Set([0, 1, 2]));
    // A name in the list that is not a binding is a configuration error, not a silent shard 0.
    expect(() => shardBindings({ ...env, D1_SHARDS: '["DB","DB_SHARD_9"]' })).toThrow("DB_SHARD_9");
  });

  it("routes an organisation and its identity ids to its shard only; a query on the other shard misses", async () => {
    const organisationId = organisationIn(1);
    expect(await shards.placeOrganisation(organisationId, { at })).toBe(1);
    const handle = await shards.forOrganisation(organisationId);
    expect(handle).toBe(shards.shard(1));
    await shardOne.prepare("INSERT INTO organisations (id, name) VALUES (?1, 'Shard one')").bind(organisationId).run();
    const identityId = `ip_${crypto.randomUUID().replaceAll("-", "")}`;
    await shards.registerIdentity(identityId, organisationId);
    expect(await shards.forIdentity(identityId)).toBe(shards.shard(1));
    expect(await shards.organisationOfIdentity(identityId)).toBe(organisationId);
    const named = "SELECT name FROM organisations WHERE id = ?1";
    expect(await shardOne.prepare(named).bind(organisationId).first("name")).toBe("Shard one");
    // The same query without the routing, on shard 0, finds nothing.
    expect(await env.DB.prepare(named).bind(organisationId).first("name")).toBeNull();
    // Organisations and ids the directory does not know are shard 0's, from before sharding.
    expect(await shards.readOrganisation(freshOrganisation())).toBe(shards.shard(0));
    expect(await shards.readIdentity("ip_unknown")).toBe(shards.shard(0));
  });

  it("refuses a claim of a value another organisation has proven, from either shard, even racing the proof", async () => {
    const value = uniqueEndpoint();
    const prover = { class: "endpoint", value, identityId: "ip_prover", organisationId: organisationIn(0) };
    const fresh = new Date(at.getTime() + 86_400_000).toISOString();
    await recordProof(directory, prover, fresh);
    // Claims by organisations placed in both shards, all at once: each is refused, naming the prover.
    const claimants = [0, 1, 0, 1, 0, 1].map((shard, n) => ({
      class: "endpoint",
      value,
      identityId: `ip_claimant_${n}`,
      organisationId: organisationIn(shard),
    }));
    const outcomes = await Promise.all(claimants.map((claimant) => claimBinding(directory, claimant, at)));
    expect(outcomes).toEqual(claimants.map(() => ({ identityId: "ip_prover", organisationId: prover.organisationId })));
    // The prover's own organisation may claim it for another passport.
    expect(await claimBinding(directory, { ...prover, identityId: "ip_prover_2" }, at)).toBeNull();

    // A proof and claims racing: a claim is recorded only if the directory ran it before the proof,
    // so every claim after the proof is refused, and none is lost between the two.
    for (let round = 0; round < 10; round++) {
      const raced = uniqueEndpoint();
      const proof = {
        class: "endpoint",
        value: raced,
        identityId: `ip_race_${round}`,
        organisationId: organisationIn(0),
      };
      const racer = (n: number) => ({
        class: "endpoint",
        value: raced,
        identityId: `ip_racer_${round}_${n}`,
        organisationId: organisationIn(1),
      });
      const [, ...claims] = await Promise.all([
        recordProof(directory, proof, fresh),
        ...[0, 1, 2].map((n) => claimBinding(directory, racer(n), at)),
      ]);
      const key = await bindingValueKey("endpoint", raced);
      const recorded = await directory
        .prepare("SELECT count(*) AS n FROM binding_claims WHERE value_key = ?1")
        .bind(key)
        .first<number>("n");
      expect(recorded).toBe(claims.filter((claim) => claim === null).length);
      expect(await claimBinding(directory, racer(9), at)).toEqual({
        identityId: proof.identityId,
        organisationId: proof.organisationId,
      });
    }
    // Once the proof is withdrawn (lapsed, or its binding removed) the value may be claimed; a
    // released claim leaves no row.
    await withdrawProof(directory, prover);
    const [first] = claimants;
    if (!first) throw new Error("no claimant");
    expect(await claimBinding(directory, first, at)).toBeNull();
    await releaseClaim(directory, first);
    const claimsOf = directory.prepare(
      "SELECT count(*) AS n FROM binding_claims WHERE value_key = ?1 AND identity_id = ?2",
    );
    expect(await claimsOf.bind(await bindingValueKey("endpoint", value), first.identityId).first("n")).toBe(0);
    // A proof that ran out refuses nothing.
    const lapsed = {
      class: "endpoint",
      value: uniqueEndpoint(),
      identityId: "ip_lapsed",
      organisationId: organisationIn(0),
    };
    await recordProof(directory, lapsed, new Date(at.getTime() - 1).toISOString());
    expect(
      await claimBinding(directory, { ...lapsed, identityId: "ip_after", organisationId: organisationIn(1) }, at),
    ).toBeNull();
  });

  it("moves an organisation to the other shard with every id, record, history and log entry, while others write", async () => {
    // Made through the API: a newcomer's organisation, placed by the hash in shard 0.
    const mover = await Caller.create("owner", organisationIn(0));
    const passports = [];
    for (let i = 0; i < 3; i++) {
      passports.push(
        await mover.createPassport({
          display_name: `Moving ${i}`,
          bindings: [{ class: "endpoint", value: uniqueEndpoint() }],
        }),
      );
    }
    for (const passport of passports) {
      await mover.json("PATCH", `/v1/passports/${passport.identity_id}`, { display_name: "Renamed before the move" });
    }
    const others = await Promise.all([0, 1].map(() => Caller.create("owner", organisationIn(0))));
    const before = await organisationRows(env.DB, mover.organisation);
    expect(before.events).toHaveLength(6);
    const logged = await Promise.all(passports.map((p) => loggedVersions(p.identity_id)));

    // Other organisations of the same shard keep writing through the move (separate passports).
    let moving = true;
    const otherWrites = others.map(async (other) => {
      const made = [];
      while (moving || made.length === 0) made.push(await other.createPassport({ display_name: "Written meanwhile" }));
      return made;
    });
    const move = moveOrganisation(shards, mover.organisation, 1, at);
    // While fenced, its own writes are refused, by the directory and by its shard.
    const fenced = await shards.placementOf(mover.organisation);
    expect(fenced.movingTo).toBe(1);
    await expect(shards.forOrganisation(mover.organisation)).rejects.toBeInstanceOf(OrganisationMoving);
    let settled = false;
    void move.finally(() => {
      settled = true;
    });
    const fenceRow = env.DB.prepare("SELECT 1 AS fenced FROM organisation_fences WHERE organisation_id = ?1").bind(
      mover.organisation,
    );
    while (!(await fenceRow.first("fenced")))
      if (settled) throw new Error("the move ended before its shard fence was seen");
    await expect(
      env.DB.prepare("UPDATE passports SET display_name = 'Sneaked in' WHERE organisation_id = ?1")
        .bind(mover.organisation)
        .run(),
    ).rejects.toThrow("organisation-moving");
    const report = await move;
    moving = false;
    const written = await Promise.all(otherWrites);

    expect(report).toMatchObject({ from: 0, to: 1, rows: { passports: 3, events: 6, publications: 6 } });
    expect(await shards.placementOf(mover.organisation)).toEqual({ shard: 1, movingTo: null, known: true });
    expect(await shards.forOrganisation(mover.organisation)).toBe(shards.shard(1));
    // Its identity ids, minted before the directory knew them, now route to the new shard.
    for (const passport of passports) expect(await shards.forIdentity(passport.identity_id)).toBe(shards.shard(1));
    expect(await organisationRows(shardOne, mover.organisation)).toEqual(before);
    const emptied = await organisationRows(env.DB, mover.organisation);
    expect(Object.values(emptied).flat()).toEqual([]);
    // The moved passports are still found by search in their new shard, and the log and the
    // resolver, which D1 does not hold, are as they were.
    const found = await shardOne
      .prepare("SELECT count(*) AS n FROM passport_search WHERE passport_search MATCH ?1")
      .bind(`"renamed before the move"`)
      .first<number>("n");
    expect(found).toBeGreaterThanOrEqual(3);
    expect(await Promise.all(passports.map((p) => loggedVersions(p.identity_id)))).toEqual(logged);
    for (const passport of passports) expect((await resolve(passport.identity_id)).status).toBe(200);
    // Every write to the other organisations landed in shard 0, none refused.
    for (const [n, made] of written.entries()) {
      const count = await env.DB.prepare("SELECT count(*) AS n FROM passports WHERE organisation_id = ?1")
        .bind(others[n]?.organisation)
        .first<number>("n");
      expect(count).toBe(made.length);
    }
    // The old shard keeps refusing the moved organisation's writes (a route cached from before the
    // move), and only its.
    await expect(
      env.DB.prepare("INSERT INTO members (organisation_id, subject, role) VALUES (?1, 'late', 'viewer')")
        .bind(mover.organisation)
        .run(),
    ).rejects.toThrow("organisation-moving");
    await others[0]?.createPassport({ display_name: "After the move" });
    // It cannot be moved to where it is; it can be moved back, past the old shard's fence row.
    await expect(moveOrganisation(shards, mover.organisation, 1, at)).rejects.toBeInstanceOf(MoveRefused);
    await moveOrganisation(shards, mover.organisation, 0, at);
    shards.forget(mover.organisation);
    expect(await shards.forOrganisation(mover.organisation)).toBe(shards.shard(0));
    expect(await organisationRows(env.DB, mover.organisation)).toEqual(before);
  });
});
