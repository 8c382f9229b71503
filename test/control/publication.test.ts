import { env } from "cloudflare:workers";
import { historyPrefix } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import { drainOutbox } from "../../workers/control/src/publication/publish.ts";
import { Caller, resolve, uniqueEndpoint } from "../support/api.ts";
import { withSequencerEnv } from "../support/publication-sequencer.ts";
import { shardOfIdentity } from "../support/shards.ts";

async function outboxRow(identityId: string) {
  return (await shardOfIdentity(identityId))
    .prepare("SELECT * FROM outbox WHERE passport_id = ?")
    .bind(identityId)
    .first<{
      record_version: number;
      attempts: number;
      last_error: string | null;
    }>();
}

const failingKv = {
  ...env.SNAPSHOTS,
  put: async () => {
    throw new Error("KV unavailable");
  },
} as unknown as KVNamespace;

/** The control plane with its KV writes failing, as during a KV outage. */
function withFailingKv(caller: Caller, method: string, id: string, path: string, body: unknown) {
  return withSequencerEnv(id, { SNAPSHOTS: failingKv }, async () =>
    app.request(
      `http://control.test${path}`,
      {
        method,
        headers: { authorization: `Bearer ${caller.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      },
      env,
    ),
  );
}

describe("publication", () => {
  it("makes every mutation visible on the very next resolver request", async () => {
    const admin = await Caller.create("admin");
    const created = await admin.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
    const id = created.identity_id;
    expect((await resolve(id)).record.record_version).toBe(1);
    const steps: [string, string, unknown][] = [
      ["PATCH", `/v1/passports/${id}`, { display_name: "Renamed" }],
      ["POST", `/v1/passports/${id}/bindings`, { class: "openapi", value: "https://api.example.com/openapi.json" }],
      [
        "POST",
        `/v1/passports/${id}/evidence`,
        { claim: "c", source: "s", scope: "x", observed_at: "2026-11-01T00:00:00Z" },
      ],
      ["PATCH", `/v1/passports/${id}/state`, { lifecycle: "suspended" }],
      ["PATCH", `/v1/passports/${id}/state`, { lifecycle: "active" }],
      ["DELETE", `/v1/passports/${id}/bindings/${created.bindings[0].id}`, undefined],
    ];
    for (const [method, path, body] of steps) {
      const view = await admin.json(method, path, body);
      const { status, record } = await resolve(id);
      expect(status).toBe(200);
      expect(record.record_version, `${method} ${path}`).toBe(view.record_version);
    }
    expect(await outboxRow(id)).toBeNull();
  });

  it("keeps the change and retries publication through the outbox when KV writes fail", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const response = await withFailingKv(owner, "PATCH", id, `/v1/passports/${id}`, { display_name: "During outage" });
    expect(response.status).toBe(200);
    expect((await response.json<{ record_version: number }>()).record_version).toBe(2);
    expect((await resolve(id)).record.record_version).toBe(1);
    expect(await outboxRow(id)).toMatchObject({ record_version: 2 });

    const second = await withFailingKv(owner, "PATCH", id, `/v1/passports/${id}/state`, { environment: "production" });
    expect(second.status).toBe(200);
    expect(await outboxRow(id)).toMatchObject({ record_version: 3 });

    const stillDown = {
      ...env.SNAPSHOTS,
      put: () => Promise.reject(new Error("still down")),
    } as unknown as KVNamespace;
    await withSequencerEnv(id, { SNAPSHOTS: stillDown }, () => drainOutbox(env));
    expect(await outboxRow(id)).toMatchObject({ record_version: 3, attempts: 1, last_error: "Error: still down" });

    await drainOutbox(env, new Date(Date.now() + 60_000));
    const { record } = await resolve(id);
    expect(record).toMatchObject({
      record_version: 3,
      display_name: "During outage",
      state: { environment: "production" },
    });
    expect(await outboxRow(id)).toBeNull();
    const history = await owner.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.map((e: { record_version: number }) => e.record_version)).toEqual([1, 2, 3]);
  });

  it("says saved, published and visible worldwide within the bound, never 'serves it now', with a link to the status route", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    await owner.json("PATCH", `/v1/passports/${id}`, { display_name: "Published" });
    const page = await app.request(
      `http://control.test/dashboard/passports/${id}?done=state`,
      { headers: { "cf-access-jwt-assertion": owner.token } },
      env,
    );
    const html = await page.text();
    expect(html).toContain("Saved and published as record version 2 (signed and written)");
    expect(html).toContain("at the latest within 2 minutes");
    expect(html).not.toContain("serves it now");
    const statusUrl = `${env.RESOLVER_BASE_URL}/api/p/${id}/status`;
    expect(html).toContain(`href="${statusUrl}"`);
    // The link answers a signed token of the current state, the version just published.
    const status = await env.TEST_RESOLVER.fetch(`http://resolver.test/api/p/${id}/status`);
    expect(status.status).toBe(200);
    const { token } = await status.json<{ token: string }>();
    const claims = JSON.parse(atob((token.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/")));
    expect(claims).toMatchObject({ identity_id: id, publication: "published", record_version: 2 });
  });

  it("tells the truth about a deferred publication: the API says pending, the Dashboard says delayed, until the retry publishes", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const deferred = await withFailingKv(owner, "PATCH", id, `/v1/passports/${id}`, { display_name: "Deferred" });
    expect(
      (await deferred.json<{ publication: { status: string; next_attempt_at: string | null } }>()).publication,
    ).toMatchObject({ status: "pending", next_attempt_at: expect.any(String) });
    const page = await app.request(
      `http://control.test/dashboard/passports/${id}?done=state`,
      { headers: { "cf-access-jwt-assertion": owner.token } },
      env,
    );
    const html = await page.text();
    expect(html).toContain("Publication to the resolver is delayed and retried automatically");
    expect(html).not.toContain("the resolver serves it now");

    await drainOutbox(env, new Date(Date.now() + 60_000));
    const published = await owner.json("GET", `/v1/passports/${id}`);
    expect(published.publication).toEqual({
      status: "published",
      next_attempt_at: null,
      status_url: `${env.RESOLVER_BASE_URL}/api/p/${id}/status`,
    });
    expect((await resolve(id)).record.record_version).toBe(2);
  });

  it("keeps the published history free of gaps when a publication failed before the next change", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    expect(
      (await withFailingKv(owner, "PATCH", id, `/v1/passports/${id}`, { display_name: "Lost write" })).status,
    ).toBe(200);
    await owner.json("PATCH", `/v1/passports/${id}`, { display_name: "Next change" });
    const { keys } = await env.SNAPSHOTS.list<{ record_version: number; digest: string; previous_digest?: string }>({
      prefix: historyPrefix(id),
    });
    const entries = keys.map((key) => key.metadata);
    expect(entries.map((e) => e?.record_version)).toEqual([1, 2, 3]);
    expect(entries[1]?.previous_digest).toBe(entries[0]?.digest);
    expect(entries[2]?.previous_digest).toBe(entries[1]?.digest);
    expect((await resolve(id)).record.previous_digest).toBe(entries[1]?.digest);
  });
});
