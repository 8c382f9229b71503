import { env, exports } from "cloudflare:workers";
import { PassportRecord } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { everyShard } from "../support/shards.ts";
import { developmentToken, freshOrganisation } from "../support/tokens.ts";

async function createApiPassport(token: string, body: unknown) {
  return exports.default.fetch("http://control.test/v1/passports", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function passportsNamed(name: string): Promise<number> {
  let count = 0;
  for (const shard of everyShard()) {
    const row = await shard
      .prepare("SELECT count(*) AS count FROM passports WHERE display_name = ?")
      .bind(name)
      .first<{ count: number }>();
    count += row?.count ?? 0;
  }
  return count;
}

describe("create, publish, resolve", () => {
  it("publishes a created API passport that the resolver then serves", async () => {
    const token = await developmentToken({ organisation: freshOrganisation(), role: "owner" });
    const created = await createApiPassport(token, {
      family: "api",
      display_name: "Payments API",
      environment: "production",
      bindings: [{ class: "endpoint", value: "https://api.example.com/payments" }],
    });
    expect(created.status).toBe(201);
    const passport = await created.json<{ identity_id: string; resolver_url: string }>();
    expect(created.headers.get("location")).toBe(`/v1/passports/${passport.identity_id}`);

    const resolved = await env.TEST_RESOLVER.fetch(`http://resolver.test/api/p/${passport.identity_id}.json`);
    expect(resolved.status).toBe(200);
    const record = PassportRecord.parse(await resolved.json());
    expect(record).toMatchObject({
      identity_id: passport.identity_id,
      family: "api",
      display_name: "Payments API",
      record_version: 1,
      state: { lifecycle: "active", environment: "production" },
      bindings: [{ class: "endpoint", value: "https://api.example.com/payments" }],
    });
    expect(resolved.headers.get("etag")).toBe(`"${record.digest}"`);
  });

  it("refuses a request without a token and creates nothing", async () => {
    const name = `Unauthenticated ${crypto.randomUUID()}`;
    const response = await exports.default.fetch("http://control.test/v1/passports", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ family: "api", display_name: name }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await passportsNamed(name)).toBe(0);
  });
});
