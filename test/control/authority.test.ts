import { PassportRecord, RATE_PERIODS } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { type Body, Caller, organisationState, resolve, uniqueEndpoint } from "../support/api.ts";
import { dashboard } from "../support/control-fixtures.ts";
import { shardOfIdentity } from "../support/shards.ts";

const UNTIL = "2099-01-01T00:00:00Z";

/** A structured grant by `grantor`, with every part of a scope. */
function grant(grantor: Record<string, string>, extra: Record<string, unknown> = {}) {
  return {
    action: "payments.refund",
    scope: {
      resource: "org:acme/customers/*",
      limits: { amount: { value: "100.00", currency: "EUR" }, rate: { count: 10, per: "hour" } },
    },
    granted_by: grantor,
    expires_at: UNTIL,
    ...extra,
  };
}

/** A problem answer: its status and body. */
async function refused(caller: Caller, path: string, body: unknown): Promise<{ status: number; problem: Body }> {
  const response = await caller.request("POST", path, body);
  return { status: response.status, problem: await response.json() };
}

describe("structured authority", () => {
  it("is published exactly as granted, with the grantor the service checked and the role held", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport({ family: "agent" });
    const before = Date.now();
    const view = await owner.json(
      "POST",
      `/v1/passports/${id}/authority`,
      grant({ kind: "organisation", id: owner.organisation, relationship: "responsible" }, { context: "Refund desk" }),
    );
    const [entry] = view.authority;
    expect(entry).toMatchObject({
      action: "payments.refund",
      context: "Refund desk",
      granted_by: { kind: "organisation", id: owner.organisation, relationship: "responsible", role: "owner" },
      scope: {
        resource: "org:acme/customers/*",
        limits: { amount: { value: "100.00", currency: "EUR" }, rate: { count: 10, per: "hour" } },
      },
      expires_at: "2099-01-01T00:00:00.000Z",
    });
    expect(Date.parse(entry.granted_at)).toBeGreaterThanOrEqual(before - 1000);

    const { record } = await resolve(id);
    expect(PassportRecord.safeParse(record).success).toBe(true);
    expect(record.authority).toEqual([
      {
        action: "payments.refund",
        scope: {
          resource: "org:acme/customers/*",
          limits: { amount: { value: "100.00", currency: "EUR" }, rate: { count: 10, per: "hour" } },
        },
        granted_by: { kind: "organisation", id: owner.organisation, relationship: "responsible", role: "owner" },
        granted_at: entry.granted_at,
        expires_at: "2099-01-01T00:00:00.000Z",
        context: "Refund desk",
      },
    ]);
    const history = await owner.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.at(-1)).toMatchObject({
      kind: "authority.added",
      actor: owner.subject,
      detail: { action: "payments.refund", granted_by: { relationship: "responsible", role: "owner" } },
    });

    // Expiring a structured entry keeps it, with its grantor, and the earlier expiry.
    const expired = await owner.json("POST", `/v1/passports/${id}/authority/${entry.id}/expire`, {});
    const after = (await resolve(id)).record.authority[0];
    expect(after.granted_by.role).toBe("owner");
    expect(after.expires_at).toBe(expired.authority[0].expires_at);
    expect(Date.parse(after.expires_at)).toBeLessThanOrEqual(Date.now());
  });

  it("publishes an action pattern without scope, and only the limits given", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport({ family: "agent" });
    await admin.json("POST", `/v1/passports/${id}/authority`, {
      action: "payments.*",
      scope: { limits: { amount: { value: "5", currency: "USD" } } },
      granted_by: { kind: "organisation", id: admin.organisation, relationship: "responsible" },
      expires_at: UNTIL,
    });
    await admin.json("POST", `/v1/passports/${id}/authority`, {
      action: "*",
      granted_by: { kind: "organisation", id: admin.organisation, relationship: "responsible" },
      expires_at: UNTIL,
    });
    const { record } = await resolve(id);
    expect(record.authority[0]).toMatchObject({
      action: "payments.*",
      scope: { limits: { amount: { value: "5", currency: "USD" } } },
      granted_by: { role: "admin" },
    });
    expect(record.authority[1].scope).toBeUndefined();
    expect(record.authority[1].context).toBeUndefined();
  });

  it("refuses an editor granting as the organisation, and leaves everything as it was", async () => {
    const owner = await Caller.create("owner");
    const editor = await Caller.create("editor", owner.organisation);
    const { identity_id: id } = await owner.createPassport({ family: "agent" });
    const state = await organisationState(owner.organisation);
    const { status, problem } = await refused(
      editor,
      `/v1/passports/${id}/authority`,
      grant({ kind: "organisation", id: owner.organisation, relationship: "responsible" }),
    );
    expect(status).toBe(403);
    expect(problem.type).toBe("urn:svc:passport:problem:forbidden");
    expect(problem.detail).toContain("owner or admin");
    expect(problem.detail).toContain("you are editor");
    expect(await organisationState(owner.organisation)).toBe(state);
    // Free-text context stays an editor's to write; it is never established authority.
    await editor.json("POST", `/v1/passports/${id}/authority`, { action: "payments.refund", context: "EU only" });
  });

  it("refuses naming another organisation, even one the caller owns, and a free-text grantor", async () => {
    const owner = await Caller.create("owner");
    const other = await owner.json("POST", "/v1/organisations", { name: "Other company" }, 201);
    const stranger = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport({ family: "agent" });
    const state = await organisationState(owner.organisation);
    for (const named of [other.id, stranger.organisation]) {
      const { status, problem } = await refused(
        owner,
        `/v1/passports/${id}/authority`,
        grant({ kind: "organisation", id: named, relationship: "responsible" }),
      );
      expect(status).toBe(400);
      expect(problem.errors).toEqual([{ path: "granted_by.id", message: expect.stringContaining(owner.organisation) }]);
    }
    const parentClaim = await refused(
      owner,
      `/v1/passports/${id}/authority`,
      grant({ kind: "organisation", id: stranger.organisation, relationship: "parent" }),
    );
    expect(parentClaim.status).toBe(400);
    expect(parentClaim.problem.errors[0]).toMatchObject({
      path: "granted_by.id",
      message: expect.stringContaining("no parent"),
    });
    const typed = await refused(owner, `/v1/passports/${id}/authority`, {
      action: "payments.refund",
      context: "EU only",
      granted_by: "Head of Payments",
    });
    expect(typed.status).toBe(400);
    expect(typed.problem.errors).toEqual([
      { path: "granted_by", message: expect.stringContaining("never typed as text") },
    ]);
    const mixed = await refused(
      owner,
      `/v1/passports/${id}/authority`,
      grant({ kind: "passport", id: owner.organisation, relationship: "responsible" }),
    );
    expect(mixed.status).toBe(400);
    expect(mixed.problem.errors[0].path).toBe("granted_by.relationship");
    expect(await organisationState(owner.organisation)).toBe(state);
  });

  it("accepts an admin of the parent organisation granting as the parent, and nobody else", async () => {
    const parentOwner = await Caller.create("owner");
    const child = await parentOwner.json(
      "POST",
      "/v1/organisations",
      { name: "Payments team", parent_id: parentOwner.organisation },
      201,
    );
    const childOwner = await Caller.create("owner", child.id);
    const parentAdmin = await Caller.create("admin", parentOwner.organisation);
    await parentOwner.json(
      "PUT",
      `/v1/organisations/${child.id}/members/${parentAdmin.subject}`,
      { role: "editor" },
      201,
    );
    const { identity_id: id } = await childOwner.createPassport({ family: "agent", organisation_id: child.id });

    const asParent = { kind: "organisation", id: parentOwner.organisation, relationship: "parent" };
    await parentAdmin.json("POST", `/v1/passports/${id}/authority`, grant(asParent));
    const { record } = await resolve(id);
    expect(record.organisation.parent.id).toBe(parentOwner.organisation);
    expect(record.authority[0].granted_by).toEqual({ ...asParent, role: "admin" });

    // The child's owner holds no role in the parent; the parent's admin is only an editor of the child.
    const notParentMember = await refused(childOwner, `/v1/passports/${id}/authority`, grant(asParent));
    expect(notParentMember.status).toBe(403);
    expect(notParentMember.problem.detail).toContain("not a member");
    const editorInChild = await refused(
      parentAdmin,
      `/v1/passports/${id}/authority`,
      grant({ kind: "organisation", id: child.id, relationship: "responsible" }),
    );
    expect(editorInChild.status).toBe(403);
    const wrongParent = await refused(
      childOwner,
      `/v1/passports/${id}/authority`,
      grant({ kind: "organisation", id: child.id, relationship: "parent" }),
    );
    expect(wrongParent.status).toBe(400);
    expect(wrongParent.problem.errors[0].message).toContain("is not the parent");
  });

  it("accepts an active passport of the organisation as grantor, and refuses a foreign, inactive or own one alike", async () => {
    const owner = await Caller.create("owner");
    const stranger = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport({ family: "agent" });
    const { identity_id: orchestrator } = await owner.createPassport({ family: "agent", display_name: "Orchestrator" });
    const { identity_id: suspended } = await owner.createPassport({ family: "agent", display_name: "Paused" });
    await owner.json("PATCH", `/v1/passports/${suspended}/state`, { lifecycle: "suspended" });
    const { identity_id: foreign } = await stranger.createPassport({ family: "agent" });

    await owner.json(
      "POST",
      `/v1/passports/${id}/authority`,
      grant({ kind: "passport", id: orchestrator, relationship: "passport" }),
    );
    expect((await resolve(id)).record.authority[0].granted_by).toEqual({
      kind: "passport",
      id: orchestrator,
      relationship: "passport",
    });

    const answers = [];
    for (const named of [foreign, suspended, "psp_00000000000000000000000000", id]) {
      answers.push(
        await refused(
          owner,
          `/v1/passports/${id}/authority`,
          grant({ kind: "passport", id: named, relationship: "passport" }),
        ),
      );
    }
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400]);
    // A passport of another organisation is refused exactly like one that does not exist.
    expect(answers[0]?.problem).toEqual(answers[2]?.problem);
    expect(answers[0]?.problem.errors[0]).toMatchObject({ path: "granted_by.id" });
    expect(answers[3]?.problem.errors[0].message).toContain("cannot grant itself");

    const editor = await Caller.create("editor", owner.organisation);
    const byEditor = await refused(
      editor,
      `/v1/passports/${id}/authority`,
      grant({ kind: "passport", id: orchestrator, relationship: "passport" }),
    );
    expect(byEditor.status).toBe(403);
  });

  it("refuses an expiry in the past or missing, a bad action pattern, currency or amount, each at its path", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport({ family: "agent" });
    const grantor = { kind: "organisation", id: owner.organisation, relationship: "responsible" };
    const cases: [Record<string, unknown>, string][] = [
      [grant(grantor, { expires_at: "2020-01-01T00:00:00Z" }), "expires_at"],
      [grant(grantor, { expires_at: undefined }), "expires_at"],
      [grant(grantor, { action: "payments*" }), "action"],
      [grant(grantor, { action: "payments.*.refund" }), "action"],
      [
        grant(grantor, { scope: { limits: { amount: { value: "100.00", currency: "eur" } } } }),
        "scope.limits.amount.currency",
      ],
      [
        grant(grantor, { scope: { limits: { amount: { value: "-5", currency: "EUR" } } } }),
        "scope.limits.amount.value",
      ],
      [
        grant(grantor, { scope: { limits: { amount: { value: "1e3", currency: "EUR" } } } }),
        "scope.limits.amount.value",
      ],
      [grant(grantor, { scope: { limits: { amount: { value: "0", currency: "EUR" } } } }), "scope.limits.amount.value"],
      [grant(grantor, { scope: { limits: { rate: { count: 0, per: "hour" } } } }), "scope.limits.rate.count"],
      [{ action: "payments.refund", scope: { resource: "x" }, context: "c" }, "scope"],
      [{ action: "payments.refund", context: "c", expires_at: "2020-01-01T00:00:00Z" }, "expires_at"],
    ];
    for (const [body, path] of cases) {
      const { status, problem } = await refused(owner, `/v1/passports/${id}/authority`, body);
      expect([status, problem.type], JSON.stringify(body)).toEqual([400, "urn:svc:passport:problem:invalid-request"]);
      expect(
        problem.errors.map((e: { path: string }) => e.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    expect((await resolve(id)).record.authority).toBeUndefined();
  });
});

describe("legacy authority", () => {
  it("keeps free-text entries, including a typed grantor written before, in the record as they were", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport({ family: "agent" });
    await owner.json("POST", `/v1/passports/${id}/authority`, { action: "payments.refund", context: "EU only" });
    // An entry written before granted_by was checked, as D1 holds it.
    await (await shardOfIdentity(id))
      .prepare(
        "INSERT INTO authority (id, passport_id, action, context, granted_by, expires_at, created_at) VALUES ('au_legacy_' || ?1, ?1, 'deploy', 'CI only', 'Head of Platform', '2099-01-01T00:00:00.000Z', '2099-12-31T00:00:00.000Z')",
      )
      .bind(id)
      .run();
    await owner.json("PATCH", `/v1/passports/${id}`, { display_name: "Republished" });
    const { record } = await resolve(id);
    expect(PassportRecord.safeParse(record).success).toBe(true);
    expect(record.authority).toEqual([
      { action: "payments.refund", context: "EU only" },
      { action: "deploy", context: "CI only", granted_by: "Head of Platform", expires_at: "2099-01-01T00:00:00.000Z" },
    ]);
    const view = await owner.json("GET", `/v1/passports/${id}`);
    expect(view.authority[1]).toMatchObject({ granted_by: "Head of Platform", scope: null, granted_at: null });
  });

  it("still validates records published before structured authority and binding context", () => {
    const digest = `sha-256:${"A".repeat(43)}`;
    const old = {
      record_format: "svc.passport_record",
      format_version: "2026-10",
      identity_id: "psp_00000000000000000000000000",
      family: "agent",
      organisation: { id: "org_a", name: "A", relationship: "responsible" },
      bindings: [
        {
          class: "endpoint",
          value: "https://a.example/",
          bound_at: "2026-10-01T00:00:00Z",
          verification: { state: "claimed" },
        },
      ],
      state: { lifecycle: "active", as_of: "2026-10-01T00:00:00Z" },
      evidence: [],
      authority: [{ action: "refund", context: "EU", granted_by: "Finance", expires_at: "2027-01-01T00:00:00Z" }],
      record_version: 1,
      published_at: "2026-10-01T00:00:00Z",
      digest,
    };
    const parsed = PassportRecord.safeParse(old);
    expect(parsed.success ? "" : JSON.stringify(parsed.error.issues)).toBe("");
    // A structured entry must say who granted it as an object, and until when.
    const forged = {
      ...old,
      authority: [
        {
          action: "refund",
          granted_by: { kind: "organisation", id: "org_a", relationship: "responsible" },
          granted_at: "2026-10-01T00:00:00Z",
        },
      ],
    };
    expect(PassportRecord.safeParse(forged).success).toBe(false);
  });
});

describe("binding context", () => {
  it("publishes a binding's own environment and version, set at creation or later, and clears them", async () => {
    const owner = await Caller.create("owner");
    const production = uniqueEndpoint();
    const created = await owner.createPassport({
      display_name: "Payments API",
      environment: "production",
      version: "2.4.0",
      bindings: [
        { class: "endpoint", value: production },
        { class: "gateway", value: `gw-${crypto.randomUUID()}`, environment: "staging", version: "2.5.0-rc.1" },
      ],
    });
    const id = created.identity_id;
    const added = await owner.json("POST", `/v1/passports/${id}/bindings`, {
      class: "service",
      value: `staging-${crypto.randomUUID().slice(0, 8)}`,
      environment: "staging",
    });
    const service = added.bindings.find((b: Body) => b.class === "service");
    expect(service).toMatchObject({ environment: "staging", version: null });
    const endpoint = added.bindings.find((b: Body) => b.class === "endpoint");
    const changed = await owner.json("PATCH", `/v1/passports/${id}/bindings/${endpoint.id}`, { version: "2.4.1" });
    expect(changed.bindings.find((b: Body) => b.id === endpoint.id)).toMatchObject({
      environment: null,
      version: "2.4.1",
    });

    let { record } = await resolve(id);
    expect(PassportRecord.safeParse(record).success).toBe(true);
    expect(record.state).toMatchObject({ environment: "production", version: "2.4.0" });
    const byClass = (cls: string) => record.bindings.find((b: Body) => b.class === cls);
    expect(byClass("endpoint")).toMatchObject({
      value: expect.stringContaining(new URL(production).host),
      version: "2.4.1",
    });
    expect(byClass("endpoint").environment).toBeUndefined();
    expect(byClass("gateway")).toMatchObject({ environment: "staging", version: "2.5.0-rc.1" });
    expect(byClass("service")).toMatchObject({ environment: "staging" });
    expect(byClass("service").version).toBeUndefined();

    await owner.json("PATCH", `/v1/passports/${id}/bindings/${service.id}`, { environment: null });
    record = (await resolve(id)).record;
    expect(byClass("service").environment).toBeUndefined();
    const history = await owner.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.at(-1)).toMatchObject({
      kind: "binding.context_changed",
      detail: { binding_id: service.id, environment: null },
    });

    const same = await owner.request("PATCH", `/v1/passports/${id}/bindings/${service.id}`, { environment: null });
    expect(same.status).toBe(400);
    const missing = await owner.request("PATCH", `/v1/passports/${id}/bindings/nope`, { environment: "qa" });
    expect(missing.status).toBe(404);
    const empty = await owner.request("PATCH", `/v1/passports/${id}/bindings/${service.id}`, {});
    expect(empty.status).toBe(400);
    const secret = await owner.request("PATCH", `/v1/passports/${id}/bindings/${service.id}`, {
      version: "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
    });
    expect(secret.status).toBe(400);
    const viewer = await Caller.create("viewer", owner.organisation);
    const byViewer = await viewer.request("PATCH", `/v1/passports/${id}/bindings/${service.id}`, { environment: "qa" });
    expect(byViewer.status).toBe(403);
  });
});

describe("the Dashboard's authority form", () => {
  it("offers every rate period, and a refused one is marked on its select and announced with it", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport({ display_name: "Refunds API" });
    const page = await (await dashboard(owner, `/dashboard/passports/${id}`)).text();
    const select = /<select id="authority-add-rate_per"[^>]*>([\s\S]*?)<\/select>/.exec(page);
    expect([...(select?.[1] ?? "").matchAll(/<option value="([^"]*)"/g)].map((m) => m[1])).toEqual([...RATE_PERIODS]);
    expect(select?.[0]).not.toContain("aria-invalid");

    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const refused = await dashboard(owner, `/dashboard/passports/${id}/authority`, {
      csrf,
      action: "payments.refund",
      granted_by: `organisation|responsible|${owner.organisation}`,
      expires_at: "2099-01-01T00:00",
      rate_count: "5",
      rate_per: "fortnight",
    });
    const shown = await refused.text();
    const marked = /<select id="authority-add-rate_per"[^>]*>/.exec(shown)?.[0] ?? "";
    expect(marked).toContain('aria-invalid="true"');
    expect(marked).toContain('aria-describedby="authority-add-rate_per-error"');
    expect(shown).toContain('id="authority-add-rate_per-error"');
  });
});
