import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { settleFinishedReevaluations } from "../../workers/control/src/binding-checks/reevaluation.ts";
import { database } from "../../workers/control/src/db/client.ts";
import worker from "../../workers/control/src/index.ts";
import { Caller, organisationState, resolve, uniqueEndpoint } from "../support/api.ts";
import { loggedVersions } from "../support/log-entries.ts";
import { shardOfIdentity } from "../support/shards.ts";

/** AWS's documented example secret access key. */
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
/** Shaped like a marketplace registration token: 95 bytes in base64, as the simulator issues them. */
const REGISTRATION_TOKEN =
  "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB1L9RIvNEVUxTveLruM0rfj0WAK1jHDhaXXzOI8d4VFmtvBtMkA/+SNV1tdpcY4BAEl9l2w/j4kSUt26phkV9k=";

describe("identity continuity", () => {
  it("keeps the identity id while endpoint, gateway, provider, version and environment change", async () => {
    const owner = await Caller.create("owner");
    const created = await owner.createPassport({
      environment: "staging",
      version: "1.0",
      bindings: [{ class: "endpoint", value: uniqueEndpoint() }],
    });
    const id = created.identity_id;
    const path = `/v1/passports/${id}`;
    await owner.json("DELETE", `${path}/bindings/${created.bindings[0].id}`);
    await owner.json("POST", `${path}/bindings`, { class: "endpoint", value: uniqueEndpoint() });
    await owner.json("POST", `${path}/bindings`, {
      class: "gateway",
      value: "arn:aws:apigateway:eu-west-1::/apis/a1b2",
    });
    await owner.json("POST", `${path}/bindings`, { class: "gateway", value: "projects/p/locations/l/gateways/g" });
    const after = await owner.json("PATCH", `${path}/state`, { environment: "production", version: "2.0" });
    expect(after.identity_id).toBe(id);
    expect(after.record_version).toBe(6);
    const { record } = await resolve(id);
    expect(record.identity_id).toBe(id);
    expect(record.state).toMatchObject({ environment: "production", version: "2.0" });
    expect(record.bindings.map((b: { class: string }) => b.class).sort()).toEqual(["endpoint", "gateway", "gateway"]);
    const list = await owner.json("GET", `/v1/passports?organisation_id=${owner.organisation}`);
    expect(list.items.map((p: { identity_id: string }) => p.identity_id)).toEqual([id]);
  });
});

describe("duplicate governance", () => {
  it("refuses a second active passport for the same primary binding and names the existing one", async () => {
    const owner = await Caller.create("owner");
    const endpoint = uniqueEndpoint();
    const first = await owner.createPassport({ bindings: [{ class: "endpoint", value: endpoint }] });
    const before = await organisationState(owner.organisation);
    const response = await owner.request("POST", "/v1/passports", {
      family: "api",
      organisation_id: owner.organisation,
      bindings: [{ class: "endpoint", value: endpoint }],
    });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      type: "urn:svc:passport:problem:duplicate-identity",
      existing_identity_id: first.identity_id,
    });
    expect(await organisationState(owner.organisation)).toBe(before);
  });

  it("allows a materially distinct object when the reason is declared, and keeps the reason in history", async () => {
    const owner = await Caller.create("owner");
    const endpoint = uniqueEndpoint();
    await owner.createPassport({ bindings: [{ class: "endpoint", value: endpoint }] });
    const second = await owner.createPassport({
      bindings: [{ class: "endpoint", value: endpoint }],
      distinct_object_reason: "Admin interface with its own responsibility boundary behind the same host",
    });
    const history = await owner.json("GET", `/v1/passports/${second.identity_id}/history`);
    expect(history.items[0].detail.distinct_object_reason).toContain("Admin interface");
  });

  it("refuses adding another passport's primary binding", async () => {
    const owner = await Caller.create("owner");
    const endpoint = uniqueEndpoint();
    const first = await owner.createPassport({ bindings: [{ class: "endpoint", value: endpoint }] });
    const second = await owner.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
    const response = await owner.request("POST", `/v1/passports/${second.identity_id}/bindings`, {
      class: "endpoint",
      value: endpoint,
    });
    expect(response.status).toBe(409);
    expect((await response.json<{ existing_identity_id: string }>()).existing_identity_id).toBe(first.identity_id);
  });

  it("holds under races: of two creates for the same primary binding at once, exactly one wins", async () => {
    const owner = await Caller.create("owner");
    for (let round = 0; round < 8; round++) {
      const endpoint = uniqueEndpoint();
      const body = {
        family: "api",
        organisation_id: owner.organisation,
        bindings: [{ class: "endpoint", value: endpoint }],
      };
      const responses = await Promise.all([1, 2, 3].map(() => owner.request("POST", "/v1/passports", body)));
      const created = responses.filter((r) => r.status === 201);
      const refused = responses.filter((r) => r.status === 409);
      expect([created.length, refused.length], `round ${round}`).toEqual([1, 2]);
      const winner = await created[0]?.json<{ identity_id: string }>();
      for (const response of refused) {
        expect(await response.json()).toMatchObject({
          type: "urn:svc:passport:problem:duplicate-identity",
          existing_identity_id: winner?.identity_id,
        });
      }
    }
    const list = await owner.json("GET", `/v1/passports?organisation_id=${owner.organisation}&limit=50`);
    expect(list.items).toHaveLength(8);
  });

  it("holds under races: two passports adding the same primary binding at once, exactly one gets it", async () => {
    const owner = await Caller.create("owner");
    for (let round = 0; round < 8; round++) {
      const endpoint = uniqueEndpoint();
      const a = await owner.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
      const b = await owner.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
      const responses = await Promise.all(
        [a, b].map((p) =>
          owner.request("POST", `/v1/passports/${p.identity_id}/bindings`, { class: "endpoint", value: endpoint }),
        ),
      );
      expect(responses.map((r) => r.status).sort(), `round ${round}`).toEqual([200, 409]);
      const holders = await (await shardOfIdentity(a.identity_id))
        .prepare(
          "SELECT p.id FROM bindings b JOIN passports p ON p.id = b.passport_id WHERE b.class = 'endpoint' AND b.value = ?",
        )
        .bind(endpoint)
        .all<{ id: string }>();
      expect(holders.results).toHaveLength(1);
      const refusal = await responses.find((r) => r.status === 409)?.json<{ existing_identity_id: string }>();
      expect(refusal?.existing_identity_id).toBe(holders.results[0]?.id);
    }
  });

  it("refuses moving a passport into an organisation where its primary binding is already held", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const home = await Caller.create("owner", undefined, subject);
    const target = await Caller.create("owner", undefined, subject);
    const endpoint = uniqueEndpoint();
    const held = await target.createPassport({ bindings: [{ class: "endpoint", value: endpoint }] });
    const moving = await home.createPassport({ bindings: [{ class: "endpoint", value: endpoint }] });
    const before = await organisationState(target.organisation);
    const response = await home.request("POST", `/v1/passports/${moving.identity_id}/transfer`, {
      organisation_id: target.organisation,
      reason: "Consolidating the team's APIs",
    });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      type: "urn:svc:passport:problem:duplicate-identity",
      existing_identity_id: held.identity_id,
    });
    expect(await organisationState(target.organisation)).toBe(before);
    expect((await home.json("GET", `/v1/passports/${moving.identity_id}`)).organisation.id).toBe(home.organisation);
  });

  it("retires a passport marked as duplicate and points it at the survivor; never both operative", async () => {
    const admin = await Caller.create("admin");
    const survivor = await admin.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
    const duplicate = await admin.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
    const marked = await admin.json("POST", `/v1/passports/${duplicate.identity_id}/duplicate-of`, {
      survivor_id: survivor.identity_id,
      reason: "Same logical API registered twice during migration",
    });
    expect(marked.state).toMatchObject({ lifecycle: "retired", duplicate_of: survivor.identity_id });
    const { record } = await resolve(duplicate.identity_id);
    expect(record.state).toMatchObject({ lifecycle: "retired", duplicate_of: survivor.identity_id });
    expect((await resolve(survivor.identity_id)).record.state.lifecycle).toBe("active");
  });
});

describe("lifecycle", () => {
  it("suspends, reactivates with a re-check flag, and clears it once the re-evaluation passed", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    const suspended = await admin.json("PATCH", `/v1/passports/${id}/state`, {
      lifecycle: "suspended",
      reason: "incident",
    });
    expect(suspended.state.lifecycle).toBe("suspended");
    expect((await resolve(id)).record.state.lifecycle).toBe("suspended");
    const reactivated = await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "active" });
    expect(reactivated.state).toMatchObject({ lifecycle: "active", recheck_required: true });
    expect((await resolve(id)).record.state.recheck_required).toBe(true);
    // No binding or evidence to re-check: the scheduler's next run settles it (test/control/reactivation.test.ts).
    await settleFinishedReevaluations(env, database(await shardOfIdentity(id)));
    expect((await resolve(id)).record.state.recheck_required).toBeUndefined();
  });

  it("refuses transitions that are not allowed and names the allowed ones", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "revoked" });
    const response = await admin.request("PATCH", `/v1/passports/${id}/state`, { lifecycle: "active" });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      type: "urn:svc:passport:problem:invalid-transition",
      current: "revoked",
      allowed: ["retired"],
    });
  });

  it("refuses a no-op transition with 409: no new version, no history event, no log entry", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "suspended", reason: "incident" });
    const before = await organisationState(admin.organisation);
    const logged = await loggedVersions(id);
    expect(logged).toEqual([1, 2]);

    const response = await admin.request("PATCH", `/v1/passports/${id}/state`, {
      lifecycle: "suspended",
      reason: "again",
    });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      type: "urn:svc:passport:problem:invalid-transition",
      detail: expect.stringContaining("already suspended"),
      current: "suspended",
      allowed: ["active", "revoked", "retired"],
    });
    expect(await organisationState(admin.organisation)).toBe(before);
    expect(await loggedVersions(id)).toEqual(logged);
    expect((await resolve(id)).record.record_version).toBe(2);
  });

  it("refuses marking a retired passport a duplicate: retirement is final", async () => {
    const admin = await Caller.create("admin");
    const survivor = await admin.createPassport();
    const { identity_id: id } = await admin.createPassport();
    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "retired", reason: "end of life" });
    const before = await organisationState(admin.organisation);
    const response = await admin.request("POST", `/v1/passports/${id}/duplicate-of`, {
      survivor_id: survivor.identity_id,
      reason: "same object",
    });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ type: "urn:svc:passport:problem:invalid-transition", allowed: [] });
    expect(await organisationState(admin.organisation)).toBe(before);
  });

  it("keeps a retired passport resolvable and unchangeable", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport({
      bindings: [{ class: "endpoint", value: uniqueEndpoint() }],
    });
    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "retired" });
    for (const [method, path, body] of [
      ["PATCH", `/v1/passports/${id}/state`, { lifecycle: "active" }],
      ["POST", `/v1/passports/${id}/bindings`, { class: "endpoint", value: uniqueEndpoint() }],
      ["PATCH", `/v1/passports/${id}`, { display_name: "reuse" }],
    ] as const) {
      const response = await admin.request(method, path, body);
      expect(response.status).toBe(409);
    }
    const { status, record } = await resolve(id);
    expect(status).toBe(200);
    expect(record.state.lifecycle).toBe("retired");
  });
});

describe("optimistic concurrency", () => {
  it("returns an ETag and answers a stale If-Match with 412, changing nothing", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const read = await owner.request("GET", `/v1/passports/${id}`);
    const etag = read.headers.get("etag") ?? "";
    expect(etag).toBe('"v1"');
    const first = await owner.request("PATCH", `/v1/passports/${id}`, { display_name: "One" }, { "if-match": etag });
    expect(first.status).toBe(200);
    expect(first.headers.get("etag")).toBe('"v2"');
    const before = await organisationState(owner.organisation);
    const stale = await owner.request("PATCH", `/v1/passports/${id}`, { display_name: "Two" }, { "if-match": etag });
    expect(stale.status).toBe(412);
    expect(await stale.json()).toMatchObject({
      type: "urn:svc:passport:problem:precondition-failed",
      current_etag: '"v2"',
    });
    expect(await organisationState(owner.organisation)).toBe(before);
  });

  it("takes an empty If-Match as a condition no version meets, never as no condition", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport({ display_name: "Kept" });
    const before = await organisationState(owner.organisation);
    // Straight into the Worker: the test runtime's loopback fetch drops a header with an empty value,
    // which a proxy in front of the platform need not do.
    const ctx = createExecutionContext();
    const empty = await worker.fetch(
      new Request(`http://control.test/v1/passports/${id}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json", "if-match": "" },
        body: JSON.stringify({ display_name: "Overwritten" }),
      }),
      env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(empty.status).toBe(412);
    expect(await empty.json()).toMatchObject({
      type: "urn:svc:passport:problem:precondition-failed",
      current_etag: '"v1"',
    });
    // A batch item's if_match is refused when empty, before anything is written.
    const batch = await owner.request("POST", "/v1/passports/batch", {
      items: [{ update: { identity_id: id, if_match: "", display_name: "Overwritten" } }],
    });
    expect(batch.status).toBe(400);
    expect(JSON.stringify(((await batch.json()) as { errors: unknown }).errors)).toContain("if_match");
    expect(await organisationState(owner.organisation)).toBe(before);
  });

  it("lets exactly one of two racing writers from the same version win", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const responses = await Promise.all(
      ["A", "B", "C"].map((name) =>
        owner.request("PATCH", `/v1/passports/${id}`, { display_name: name }, { "if-match": '"v1"' }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 412, 412]);
    const history = await owner.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.map((e: { record_version: number }) => e.record_version)).toEqual([1, 2]);
  });
});

describe("evidence", () => {
  const base = {
    claim: "organisation.domain_control",
    source: "DNS TXT check by the control plane",
    scope: "api.example.com only",
    observed_at: "2026-11-01T10:00:00Z",
  };

  it("publishes evidence with source, scope and freshness, and withdraws it", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const added = await owner.json("POST", `/v1/passports/${id}/evidence`, {
      ...base,
      fresh_until: "2099-01-01T00:00:00Z",
      reference: "https://evidence.example.com/dns/1",
    });
    expect(added.evidence[0]).toMatchObject({ claim: base.claim, freshness: "fresh" });
    expect((await resolve(id)).record.evidence[0]).toMatchObject({
      claim: base.claim,
      source: base.source,
      scope: base.scope,
      observed_at: "2026-11-01T10:00:00.000Z",
      fresh_until: "2099-01-01T00:00:00.000Z",
    });
    await owner.json("DELETE", `/v1/passports/${id}/evidence/${added.evidence[0].id}`);
    expect((await resolve(id)).record.evidence).toEqual([]);
  });

  const credentials: [string, Record<string, string>][] = [
    ["a bearer token in the scope", { scope: "Bearer abcdefghijklmnopqrstuvwxyz012345" }],
    ["an API key in the reference URL", { reference: "https://evidence.example.com/check?api_key=sk123456789" }],
    ["a private key in the source", { source: "-----BEGIN PRIVATE KEY-----\nMIIEv..." }],
    ["an AWS access key id", { source: "checked with AKIAIOSFODNN7EXAMPLE" }],
    [
      "a JWT",
      { claim: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U" },
    ],
    ["a marketplace registration token", { scope: "x-amzn-marketplace-token=AbCdEf123456" }],
    ["an AWS secret access key", { scope: `checked with aws_secret_access_key=${AWS_SECRET}` }],
    ["a bare registration token", { scope: `token ${REGISTRATION_TOKEN}` }],
  ];
  for (const [name, override] of credentials) {
    it(`refuses ${name} with a clear error and stores nothing`, async () => {
      const owner = await Caller.create("owner");
      const { identity_id: id } = await owner.createPassport();
      const before = await organisationState(owner.organisation);
      const response = await owner.request("POST", `/v1/passports/${id}/evidence`, { ...base, ...override });
      expect(response.status).toBe(400);
      const body = await response.json<{ errors: { path: string; message: string }[] }>();
      expect(body.errors[0]?.message).toMatch(/credentials and secrets never belong in a passport/);
      expect(JSON.stringify(body)).not.toContain(Object.values(override)[0]);
      expect(await organisationState(owner.organisation)).toBe(before);
    });
  }
});

describe("credentials in binding labels", () => {
  const labels: [string, string][] = [
    ["an AWS secret access key", `AWS_SECRET_ACCESS_KEY: ${AWS_SECRET}`],
    ["a bare registration token", REGISTRATION_TOKEN],
  ];
  for (const [name, label] of labels) {
    it(`refuses ${name} in a binding label, at creation and when added (400, nothing stored)`, async () => {
      const owner = await Caller.create("owner");
      const { identity_id: id } = await owner.createPassport();
      const before = await organisationState(owner.organisation);
      const binding = { class: "documentation", value: "https://docs.example.com/api", label };
      for (const response of [
        await owner.request("POST", `/v1/passports/${id}/bindings`, binding),
        await owner.request("POST", "/v1/passports", {
          family: "api",
          organisation_id: owner.organisation,
          bindings: [binding],
        }),
      ]) {
        expect(response.status).toBe(400);
        const text = await response.text();
        expect(text).toMatch(/credentials and secrets never belong in a passport/);
        expect(text).not.toContain(label);
      }
      expect(await organisationState(owner.organisation)).toBe(before);
    });
  }
});

describe("credentials in any field that is published or kept in the history", () => {
  const SECRET = "sk_live_0123456789abcdefghijklmn";
  const cases: [string, (owner: Caller, id: string) => Promise<Response>][] = [
    [
      "display_name at creation",
      (o) =>
        o.request("POST", "/v1/passports", {
          family: "api",
          organisation_id: o.organisation,
          display_name: `Payments ${SECRET}`,
        }),
    ],
    [
      "environment at creation",
      (o) =>
        o.request("POST", "/v1/passports", { family: "api", organisation_id: o.organisation, environment: SECRET }),
    ],
    [
      "version at creation",
      (o) => o.request("POST", "/v1/passports", { family: "api", organisation_id: o.organisation, version: SECRET }),
    ],
    [
      "distinct_object_reason",
      (o) =>
        o.request("POST", "/v1/passports", {
          family: "api",
          organisation_id: o.organisation,
          distinct_object_reason: `key ${SECRET}`,
        }),
    ],
    ["display_name in an update", (o, id) => o.request("PATCH", `/v1/passports/${id}`, { display_name: SECRET })],
    [
      "the transfer reason",
      (o, id) =>
        o.request("POST", `/v1/passports/${id}/transfer`, {
          organisation_id: o.organisation,
          reason: `password=${SECRET}`,
        }),
    ],
    [
      "the duplicate reason",
      (o, id) => o.request("POST", `/v1/passports/${id}/duplicate-of`, { survivor_id: id, reason: SECRET }),
    ],
    ["an organisation name", (o) => o.request("POST", "/v1/organisations", { name: `Acme ${SECRET}` })],
  ];
  for (const [field, send] of cases) {
    it(`refuses a credential in ${field} (400, nothing stored, the secret not echoed)`, async () => {
      const owner = await Caller.create("owner");
      const { identity_id: id } = await owner.createPassport();
      const before = await organisationState(owner.organisation);
      const response = await send(owner, id);
      expect(response.status).toBe(400);
      const text = await response.text();
      expect(text).toMatch(/credentials and secrets never belong in a passport/);
      expect(text).not.toContain(SECRET);
      expect(await organisationState(owner.organisation)).toBe(before);
    });
  }
});

describe("bindings", () => {
  it("validates values per class", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport({ family: "api" });
    const cases = [
      { class: "endpoint", value: "not a url" },
      { class: "openapi", value: "openapi.yaml" },
      { class: "repository", value: "my repo" },
      { class: "environment", value: "Production Env" },
      { class: "manifest", value: "https://agents.example.com/card.json" },
      { class: "endpoint", value: "https://user:pass@api.example.com" },
    ];
    for (const binding of cases) {
      const response = await owner.request("POST", `/v1/passports/${id}/bindings`, binding);
      expect(response.status, JSON.stringify(binding)).toBe(400);
    }
  });

  it("answers 409 for a binding the passport already has", async () => {
    const owner = await Caller.create("owner");
    const endpoint = uniqueEndpoint();
    const { identity_id: id } = await owner.createPassport({ bindings: [{ class: "endpoint", value: endpoint }] });
    const response = await owner.request("POST", `/v1/passports/${id}/bindings`, {
      class: "endpoint",
      value: endpoint,
    });
    expect(response.status).toBe(409);
  });

  it("gives agent passports the agent binding classes", async () => {
    const owner = await Caller.create("owner");
    const agent = await owner.createPassport({
      family: "agent",
      bindings: [
        { class: "manifest", value: "https://agents.example.com/a/agent-card.json" },
        { class: "mcp_surface", value: "https://agents.example.com/a/mcp" },
        { class: "package", value: "pkg:npm/%40example/agent@1.2.3" },
        { class: "repository", value: "https://github.com/example/agent" },
      ],
    });
    const { record } = await resolve(agent.identity_id);
    expect(record.family).toBe("agent");
    // Bindings made together are listed by class, then value.
    expect(record.bindings.map((b: { class: string }) => b.class)).toEqual([
      "manifest",
      "mcp_surface",
      "package",
      "repository",
    ]);
  });
});

describe("history", () => {
  it("records every change with actor, time, kind and record version", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    await owner.json("PATCH", `/v1/passports/${id}`, { display_name: "Named" });
    await owner.json("POST", `/v1/passports/${id}/bindings`, { class: "endpoint", value: uniqueEndpoint() });
    await owner.json("PATCH", `/v1/passports/${id}/state`, { availability: "degraded" });
    await owner.json("POST", `/v1/passports/${id}/authority`, {
      action: "payments.refund",
      context: "EU merchants only",
    });
    const history = await owner.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.map((e: { kind: string }) => e.kind)).toEqual([
      "passport.created",
      "display.updated",
      "binding.added",
      "state.changed",
      "authority.added",
    ]);
    expect(history.items.map((e: { record_version: number }) => e.record_version)).toEqual([1, 2, 3, 4, 5]);
    for (const event of history.items) {
      expect(event.actor).toBe(owner.subject);
      expect(Date.parse(event.at)).not.toBeNaN();
    }
    const { record } = await resolve(id);
    expect(record.record_version).toBe(5);
    expect(record.authority).toEqual([{ action: "payments.refund", context: "EU merchants only" }]);
  });
});

describe("authority context", () => {
  it("expires an entry now or earlier, keeps it in the record with its expiry, and never extends it", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const added = await owner.json("POST", `/v1/passports/${id}/authority`, {
      action: "payments.refund",
      context: "EU merchants only",
      expires_at: "2099-01-01T00:00:00Z",
    });
    const entry = added.authority[0].id;
    const before = Date.now();
    const expired = await owner.json("POST", `/v1/passports/${id}/authority/${entry}/expire`, {});
    const at = Date.parse(expired.authority[0].expires_at);
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(at).toBeLessThan(Date.parse("2099-01-01T00:00:00Z"));
    const { record } = await resolve(id);
    expect(record.authority).toEqual([
      { action: "payments.refund", context: "EU merchants only", expires_at: expired.authority[0].expires_at },
    ]);

    const later = await owner.request("POST", `/v1/passports/${id}/authority/${entry}/expire`, {
      expires_at: "2098-01-01T00:00:00Z",
    });
    expect(later.status).toBe(400);
    expect(await later.json()).toMatchObject({ errors: [{ path: "expires_at" }] });
    const missing = await owner.request("POST", `/v1/passports/${id}/authority/au_missing/expire`, {});
    expect(missing.status).toBe(404);
    const history = await owner.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.at(-1)).toMatchObject({ kind: "authority.expired", detail: { action: "payments.refund" } });
  });
});

describe("listing", () => {
  it("filters and pages in a stable order with a cursor", async () => {
    const owner = await Caller.create("owner");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const passport = await owner.createPassport({ environment: i % 2 ? "staging" : "production" });
      ids.push(passport.identity_id);
    }
    await owner.createPassport({ family: "agent" });
    const base = `/v1/passports?organisation_id=${owner.organisation}&family=api&limit=2`;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { identity_id: string }[]; next_cursor: string | null } = await owner.json(
        "GET",
        cursor ? `${base}&cursor=${cursor}` : base,
      );
      seen.push(...page.items.map((p) => p.identity_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const staging = await owner.json("GET", `/v1/passports?organisation_id=${owner.organisation}&environment=staging`);
    expect(staging.items.map((p: { identity_id: string }) => p.identity_id)).toEqual([ids[1], ids[3]]);
    const bad = await owner.request("GET", "/v1/passports?limit=0&cursor=@@");
    expect(bad.status).toBe(400);
  });

  it("refuses a repeated filter instead of answering for its first value alone", async () => {
    const owner = await Caller.create("owner");
    await owner.createPassport({ family: "api" });
    const repeated = await owner.request("GET", "/v1/passports?family=api&family=agent");
    expect(repeated.status).toBe(400);
    expect(await repeated.json()).toMatchObject({
      type: "urn:svc:passport:problem:invalid-request",
      errors: [{ path: "family", message: "is given more than once; give it once" }],
    });
  });

  it("pages a passport's history by its declared parameters, and refuses others", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport({ display_name: "One" });
    for (const name of ["Two", "Three"]) await owner.json("PATCH", `/v1/passports/${id}`, { display_name: name });
    const first = await owner.json("GET", `/v1/passports/${id}/history?limit=2`);
    expect(first.items.map((e: { record_version: number }) => e.record_version)).toEqual([1, 2]);
    const rest = await owner.json("GET", `/v1/passports/${id}/history?after=${first.next_after}&limit=2`);
    expect(rest.items.map((e: { record_version: number }) => e.record_version)).toEqual([3]);
    expect(rest.next_after).toBeNull();
    for (const query of ["limit=501", "limit=0", "after=-1", "bogus=1", "limit=2&limit=3"]) {
      const refused = await owner.request("GET", `/v1/passports/${id}/history?${query}`);
      expect(refused.status, query).toBe(400);
      expect(((await refused.json()) as { errors?: unknown[] }).errors?.length, query).toBeGreaterThan(0);
    }
  });
});
