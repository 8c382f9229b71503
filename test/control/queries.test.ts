import { env } from "cloudflare:workers";
import { mintIdentityId } from "@passport/domain";
import { beforeEach, describe, expect, it } from "vitest";
import { type Database, database } from "../../workers/control/src/db/client.ts";
import {
  createOrganisationStatements,
  membershipIn,
  membershipsOf,
  membersOf,
  organisationsOf,
  organisationWithParent,
  putMember,
  removeMember,
} from "../../workers/control/src/db/organisations.ts";
import {
  authorityOf,
  bindingOf,
  bindingWithValue,
  currentEvidenceOf,
  deleteAuthority,
  deleteBinding,
  insertAuthority,
  insertBinding,
  insertEvidence,
  insertGrant,
  isGrantNoLongerHeld,
  setAuthorityExpiry,
  setBindingContext,
  withdrawEvidence,
} from "../../workers/control/src/db/passport-entries.ts";
import {
  commitChangeStatements,
  createPassportStatements,
  findPassport,
  historyOf,
  listPassports,
  loadAggregate,
  type NewPassport,
  passportsWithBinding,
} from "../../workers/control/src/db/passports.ts";
import { becomeFirstOwner, hasMembers } from "../../workers/control/src/marketplace/queries/acquisitions.ts";

// Each db/ function run directly against the local D1 with the real migrations. Every test works
// in organisations of its own, so other test files writing to the same database cannot disturb it.

let db: Database;
let org: string;
const subject = "user:queries";

function unique(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
}

async function newOrganisation(parentId?: string, owner = subject): Promise<string> {
  const id = unique("org");
  await db.batch(createOrganisationStatements(db, { id, name: id, parentId, ownerSubject: owner }));
  return id;
}

async function newPassport(overrides: Partial<NewPassport> = {}): Promise<string> {
  const id = mintIdentityId();
  const at = overrides.at ?? new Date().toISOString();
  await db.batch(
    createPassportStatements(db, {
      id,
      organisationId: org,
      family: "api",
      bindings: [],
      actor: subject,
      at,
      ...overrides,
    }),
  );
  return id;
}

async function passport(id: string) {
  const row = await findPassport(db, id);
  if (!row) throw new Error(`no passport ${id}`);
  return row;
}

beforeEach(async () => {
  db = database(env.DB);
  org = await newOrganisation();
});

describe("passport queries", () => {
  it("creates a passport at record version 1 with its bindings, history event and pending publication", async () => {
    const id = await newPassport({ bindings: [{ class: "endpoint", value: "https://q.example/a" }], displayName: "A" });
    const stored = await loadAggregate(db, id);
    expect(stored?.passport).toMatchObject({
      id,
      organisationId: org,
      family: "api",
      recordVersion: 1,
      displayName: "A",
    });
    expect(stored?.organisation.id).toBe(org);
    expect(stored?.bindings.map((b) => [b.class, b.value])).toEqual([["endpoint", "https://q.example/a"]]);
    const [created] = await historyOf(db, id, 0, 10);
    expect(created).toMatchObject({ kind: "passport.created", recordVersion: 1, actor: subject });
    const outbox = await env.DB.prepare("SELECT record_version FROM outbox WHERE passport_id = ?").bind(id).first();
    expect(outbox).toEqual({ record_version: 1 });
    expect(await loadAggregate(db, mintIdentityId())).toBeUndefined();
  });

  it("commits a change as the next record version, and refuses a commit from a stale read", async () => {
    const id = await newPassport();
    const read = await passport(id);
    const at = new Date().toISOString();
    await db.batch(
      commitChangeStatements(db, read, { kind: "display.updated", detail: {}, set: { displayName: "B" } }, subject, at),
    );
    expect(await passport(id)).toMatchObject({ recordVersion: 2, displayName: "B" });
    await expect(
      db.batch(
        commitChangeStatements(
          db,
          read,
          { kind: "display.updated", detail: {}, set: { displayName: "C" } },
          subject,
          at,
        ),
      ),
    ).rejects.toThrow();
    expect(await passport(id)).toMatchObject({ recordVersion: 2, displayName: "B" });
    expect((await historyOf(db, id, 0, 10)).map((e) => e.recordVersion)).toEqual([1, 2]);
  });

  it("finds operative passports of the family and organisation holding a binding value", async () => {
    const value = `https://q.example/${crypto.randomUUID()}`;
    const binding = [{ class: "endpoint" as const, value }];
    const holder = await newPassport({ bindings: binding });
    await newPassport({ family: "agent", bindings: binding });
    // Declared distinct, or the database would refuse a second operative holder (migration 0007).
    const retired = await newPassport({ bindings: binding, distinctReason: "a materially distinct object" });
    await db.batch(
      commitChangeStatements(
        db,
        await passport(retired),
        { kind: "x", detail: {}, set: { lifecycle: "retired" } },
        subject,
        new Date().toISOString(),
      ),
    );
    const elsewhere = await newOrganisation();
    await newPassport({ organisationId: elsewhere, bindings: binding });

    expect(await passportsWithBinding(db, org, "api", "endpoint", [value, "https://q.example/none"])).toEqual([
      { id: holder, value },
    ]);
    expect(await passportsWithBinding(db, org, "api", "endpoint", [])).toEqual([]);
    expect(await passportsWithBinding(db, org, "api", "openapi", [value])).toEqual([]);
  });

  it("lists passports in (created_at, id) order, filtered, one page after a cursor", async () => {
    const other = await newOrganisation();
    const first = await newPassport({ at: "2026-01-01T00:00:00.000Z", environment: "production" });
    const second = await newPassport({ at: "2026-01-02T00:00:00.000Z" });
    const third = await newPassport({ at: "2026-01-03T00:00:00.000Z", family: "agent", environment: "production" });
    const foreign = await newPassport({ organisationId: other, at: "2026-01-01T12:00:00.000Z" });

    const all = await listPassports(db, { organisationIds: [org, other], limit: 10 });
    expect(all.map((p) => p.id)).toEqual([first, foreign, second, third]);
    const mine = await listPassports(db, { organisationIds: [org], limit: 2 });
    expect(mine.map((p) => p.id)).toEqual([first, second]);
    const last = mine.at(-1);
    if (!last) throw new Error("empty page");
    const next = await listPassports(db, {
      organisationIds: [org],
      limit: 2,
      after: { createdAt: last.createdAt, id: last.id },
    });
    expect(next.map((p) => p.id)).toEqual([third]);
    expect((await listPassports(db, { organisationIds: [org], family: "agent", limit: 10 })).map((p) => p.id)).toEqual([
      third,
    ]);
    expect(
      (await listPassports(db, { organisationIds: [org], environment: "production", limit: 10 })).map((p) => p.id),
    ).toEqual([first, third]);
    expect(await listPassports(db, { organisationIds: [], limit: 10 })).toEqual([]);
  });

  it("pages history by event sequence", async () => {
    const id = await newPassport();
    let current = await passport(id);
    for (const name of ["B", "C"]) {
      await db.batch(
        commitChangeStatements(
          db,
          current,
          { kind: "display.updated", detail: { name }, set: { displayName: name } },
          subject,
          new Date().toISOString(),
        ),
      );
      current = await passport(id);
    }
    const [one, ...rest] = await historyOf(db, id, 0, 2);
    expect(rest).toHaveLength(1);
    if (!one) throw new Error("no history");
    const after = await historyOf(db, id, rest[0]?.seq ?? 0, 10);
    expect(after.map((e) => e.detail)).toEqual([{ name: "C" }]);
  });
});

describe("passport entry queries", () => {
  it("finds, adds and deletes bindings of one passport only", async () => {
    const id = await newPassport();
    const otherPassport = await newPassport();
    const bindingId = crypto.randomUUID();
    const value = "https://q.example/binding";
    await insertBinding(db, {
      id: bindingId,
      passportId: id,
      class: "endpoint",
      value,
      boundAt: new Date().toISOString(),
    });
    expect((await bindingWithValue(db, id, { class: "endpoint", value }))?.id).toBe(bindingId);
    expect(await bindingWithValue(db, id, { class: "openapi", value })).toBeUndefined();
    expect((await bindingOf(db, id, bindingId))?.value).toBe(value);
    expect(await bindingOf(db, otherPassport, bindingId)).toBeUndefined();
    await deleteBinding(db, bindingId);
    expect(await bindingOf(db, id, bindingId)).toBeUndefined();
  });

  it("withdraws evidence without deleting it, and then no longer finds it as current", async () => {
    const id = await newPassport();
    const evidenceId = unique("ev");
    const observedAt = new Date().toISOString();
    await insertEvidence(db, { id: evidenceId, passportId: id, claim: "c", source: "s", scope: "x", observedAt });
    expect((await currentEvidenceOf(db, id, evidenceId))?.claim).toBe("c");
    expect(await currentEvidenceOf(db, await newPassport(), evidenceId)).toBeUndefined();
    await withdrawEvidence(db, evidenceId, new Date().toISOString());
    expect(await currentEvidenceOf(db, id, evidenceId)).toBeUndefined();
    const kept = await env.DB.prepare("SELECT withdrawn_at FROM evidence WHERE id = ?")
      .bind(evidenceId)
      .first<{ withdrawn_at: string }>();
    expect(kept?.withdrawn_at).toEqual(expect.any(String));
    expect((await loadAggregate(db, id))?.evidence).toEqual([]);
  });

  it("finds, adds, expires and deletes authority entries of one passport only", async () => {
    const id = await newPassport();
    const authorityId = unique("au");
    await insertAuthority(db, { id: authorityId, passportId: id, action: "deploy", context: "ctx" });
    expect((await authorityOf(db, id, authorityId))?.action).toBe("deploy");
    await setAuthorityExpiry(db, authorityId, "2026-11-23T10:00:00.000Z");
    expect((await authorityOf(db, id, authorityId))?.expiresAt).toBe("2026-11-23T10:00:00.000Z");
    expect(await authorityOf(db, await newPassport(), authorityId)).toBeUndefined();
    await deleteAuthority(db, authorityId);
    expect(await authorityOf(db, id, authorityId)).toBeUndefined();
  });
});

describe("structured authority queries", () => {
  const grant = (id: string, passportId: string, relationship: "responsible" | "parent" | "passport", by: string) => ({
    row: {
      id,
      passportId,
      action: "payments.refund",
      expiresAt: "2099-01-01T00:00:00.000Z",
      grantedAt: "2026-11-24T00:00:00.000Z",
      grantedByKind: relationship === "passport" ? ("passport" as const) : ("organisation" as const),
      grantedById: by,
      grantedByRelationship: relationship,
    },
    subject,
    organisationId: org,
  });

  it("writes a grant only while its grantor holds, recording the role read in the statement", async () => {
    const id = await newPassport();
    const held = unique("au");
    await insertGrant(db, grant(held, id, "responsible", org));
    expect(await authorityOf(db, id, held)).toMatchObject({ grantedByKind: "organisation", grantedByRole: "owner" });

    // The granting member lost the role between the check and the write: the whole batch rolls back.
    await putMember(db, org, "user:other-owner", "owner");
    await putMember(db, org, subject, "editor");
    const lost = unique("au");
    const batch = db.batch([
      insertGrant(db, grant(lost, id, "responsible", org)),
      insertBinding(db, {
        id: unique("b"),
        passportId: id,
        class: "service",
        value: unique("svc"),
        boundAt: "2026-11-24T00:00:00.000Z",
      }),
    ]);
    const error = await batch.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isGrantNoLongerHeld(error)).toBe(true);
    expect(await authorityOf(db, id, lost)).toBeUndefined();
    expect((await loadAggregate(db, id))?.bindings).toEqual([]);
  });

  it("writes a parent grant only while the parent link holds, and a passport grant only while that passport is active here", async () => {
    const parent = await newOrganisation();
    org = await newOrganisation(parent);
    const id = await newPassport();
    await insertGrant(db, grant(unique("au"), id, "parent", parent));
    const detached = await newOrganisation();
    const notParent = await insertGrant(db, grant(unique("au"), id, "parent", detached)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isGrantNoLongerHeld(notParent)).toBe(true);

    const granting = await newPassport();
    await insertGrant(db, grant(unique("au"), id, "passport", granting));
    await env.DB.prepare("UPDATE passports SET lifecycle = 'suspended' WHERE id = ?").bind(granting).run();
    const inactive = await insertGrant(db, grant(unique("au"), id, "passport", granting)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isGrantNoLongerHeld(inactive)).toBe(true);
    expect((await loadAggregate(db, id))?.authority.map((a) => a.grantedByRelationship)).toEqual([
      "parent",
      "passport",
    ]);
  });

  it("sets and clears a binding's environment and version", async () => {
    const id = await newPassport({ bindings: [{ class: "endpoint", value: "https://q.example/ctx" }] });
    const [binding] = (await loadAggregate(db, id))?.bindings ?? [];
    await setBindingContext(db, binding?.id as string, { environment: "staging", version: "2" });
    expect(await bindingOf(db, id, binding?.id as string)).toMatchObject({ environment: "staging", version: "2" });
    await setBindingContext(db, binding?.id as string, { environment: null });
    expect(await bindingOf(db, id, binding?.id as string)).toMatchObject({ environment: null, version: "2" });
  });
});

describe("subscription history queries", () => {
  /** The query plan's steps for `sql`: which table each reads, and through which index. */
  async function plan(sql: string, ...bindings: string[]): Promise<string> {
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...bindings)
      .all<{ detail: string }>();
    return results.map((row) => row.detail).join("\n");
  }

  it("reads an organisation's events, agreements and acquisitions through their indexes, not a scan", async () => {
    expect(
      await plan(
        "SELECT * FROM marketplace_events WHERE customer_key IN (?, ?) ORDER BY occurred_at DESC LIMIT 200",
        "license:a",
        "license:b",
      ),
    ).toContain("USING INDEX marketplace_events_customer");
    expect(
      await plan("SELECT * FROM marketplace_customers WHERE marketplace_account_id = ? ORDER BY created_at", "mpa_1"),
    ).toContain("USING INDEX marketplace_customers_marketplace_account");
    expect(
      await plan(
        "SELECT * FROM acquisitions WHERE marketplace_account_id = ? ORDER BY created_at DESC LIMIT 20",
        "mpa_1",
      ),
    ).toContain("USING INDEX acquisitions_marketplace_account");
  });
});

describe("organisation queries", () => {
  it("reads memberships, members and the parent organisation", async () => {
    const child = await newOrganisation(org);
    await putMember(db, child, "user:queries-viewer", "viewer");
    expect(await membershipIn(db, subject, child)).toEqual({ organisationId: child, role: "owner" });
    expect(await membershipIn(db, "user:queries-nobody", child)).toBeUndefined();
    expect(await membershipsOf(db, "user:queries-viewer")).toContainEqual({ organisationId: child, role: "viewer" });
    expect((await membersOf(db, child)).map((m) => [m.subject, m.role])).toEqual([
      [subject, "owner"],
      ["user:queries-viewer", "viewer"],
    ]);
    const found = await organisationWithParent(db, child);
    expect([found?.organisation.id, found?.parent?.id]).toEqual([child, org]);
    expect((await organisationsOf(db, subject)).map((o) => o.id)).toEqual(expect.arrayContaining([org, child]));

    await putMember(db, child, "user:queries-viewer", "editor");
    expect(await membershipIn(db, "user:queries-viewer", child)).toEqual({ organisationId: child, role: "editor" });
    await removeMember(db, child, "user:queries-viewer");
    expect(await membershipIn(db, "user:queries-viewer", child)).toBeUndefined();
  });

  it("never removes the last owner, even when both owners are removed at the same moment", async () => {
    for (let round = 0; round < 10; round++) {
      const organisation = unique("org");
      await env.DB.prepare("INSERT INTO organisations (id, name) VALUES (?, ?)").bind(organisation, organisation).run();
      await putMember(db, organisation, "user:owner-a", "owner");
      await putMember(db, organisation, "user:owner-b", "owner");
      const removed = await Promise.all([
        removeMember(db, organisation, "user:owner-a"),
        removeMember(db, organisation, "user:owner-b"),
      ]);
      expect(removed.filter(Boolean), `round ${round}`).toHaveLength(1);
      expect((await membersOf(db, organisation)).filter((m) => m.role === "owner")).toHaveLength(1);
      expect(await removeMember(db, organisation, removed[0] ? "user:owner-b" : "user:owner-a")).toBe(false);
    }
  });

  it("never demotes the last owner, even when both owners demote each other at the same moment", async () => {
    for (let round = 0; round < 10; round++) {
      const organisation = unique("org");
      await env.DB.prepare("INSERT INTO organisations (id, name) VALUES (?, ?)").bind(organisation, organisation).run();
      await putMember(db, organisation, "user:owner-a", "owner");
      await putMember(db, organisation, "user:owner-b", "owner");
      const demoted = await Promise.all([
        putMember(db, organisation, "user:owner-a", "admin"),
        putMember(db, organisation, "user:owner-b", "viewer"),
      ]);
      expect(demoted.filter(Boolean), `round ${round}`).toHaveLength(1);
      expect((await membersOf(db, organisation)).filter((m) => m.role === "owner")).toHaveLength(1);
    }
  });

  it("changes or removes an owner only for an owner", async () => {
    const organisation = unique("org");
    await env.DB.prepare("INSERT INTO organisations (id, name) VALUES (?, ?)").bind(organisation, organisation).run();
    await putMember(db, organisation, "user:owner-a", "owner");
    await putMember(db, organisation, "user:owner-b", "owner");
    expect(await putMember(db, organisation, "user:owner-a", "editor", false)).toBe(false);
    expect(await removeMember(db, organisation, "user:owner-a", false)).toBe(false);
    expect(await putMember(db, organisation, "user:member", "editor", false)).toBe(true);
    expect(await removeMember(db, organisation, "user:member", false)).toBe(true);
    expect((await membersOf(db, organisation)).map((m) => [m.subject, m.role])).toEqual([
      ["user:owner-a", "owner"],
      ["user:owner-b", "owner"],
    ]);
  });

  it("makes exactly one of two racing claimants the owner of an unheld organisation", async () => {
    for (let round = 0; round < 10; round++) {
      const unheld = unique("org");
      await env.DB.prepare("INSERT INTO organisations (id, name) VALUES (?, ?)").bind(unheld, unheld).run();
      const became = await Promise.all([
        becomeFirstOwner(db, unheld, "user:first"),
        becomeFirstOwner(db, unheld, "user:second"),
      ]);
      expect(became.filter(Boolean), `round ${round}`).toHaveLength(1);
      expect(await membersOf(db, unheld)).toHaveLength(1);
    }
  });

  it("makes only the first claimant of an unheld organisation its owner", async () => {
    const unheld = unique("org");
    await env.DB.prepare("INSERT INTO organisations (id, name) VALUES (?, ?)").bind(unheld, unheld).run();
    expect(await hasMembers(db, unheld)).toBe(false);
    expect(await becomeFirstOwner(db, unheld, "user:first")).toBe(true);
    expect(await becomeFirstOwner(db, unheld, "user:second")).toBe(false);
    expect(await hasMembers(db, unheld)).toBe(true);
    expect(await membersOf(db, unheld)).toEqual([
      { subject: "user:first", role: "owner", createdAt: expect.any(String) },
    ]);
  });
});
