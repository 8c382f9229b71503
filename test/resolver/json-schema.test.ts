import { exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import {
  mintIdentityId,
  PassportRecord,
  passportPolicyJsonSchema,
  passportRecordJsonSchema,
  passportStatusJsonSchema,
  projectPublicRecord,
  sealRecord,
} from "@passport/domain";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { aggregate, aggregateArbitrary, BASE, publish } from "./support/records.ts";

let served: Record<string, unknown>;
let validator: Validator;

beforeAll(async () => {
  const response = await exports.default.fetch(`${BASE}/schemas/passport-record.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/schema+json");
  served = await response.json();
  validator = new Validator(served as never, "2020-12", false);
});

const errorsOf = (value: unknown) => validator.validate(value).errors.map((e) => `${e.instanceLocation}: ${e.error}`);

describe("the JSON Schema served at /schemas/passport-record.json", () => {
  it("is the one generated from the zod PassportRecord (run `pnpm run schemas` after changing the record)", () => {
    expect(served).toEqual(passportRecordJsonSchema());
  });

  it("answers a conditional request with 304", async () => {
    const first = await exports.default.fetch(`${BASE}/schemas/passport-record.json`);
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    const again = await exports.default.fetch(`${BASE}/schemas/passport-record.json`, {
      headers: { "if-none-match": etag ?? "" },
    });
    expect(again.status).toBe(304);
  });

  it("validates every record these tests publish, as the resolver serves it", async () => {
    const variants = [
      aggregate(),
      aggregate({ passport: { family: "agent", lifecycle: "retired", displayName: null, availability: null } }),
      aggregate({ passport: { lifecycle: "suspended", recheckRequired: true, duplicateOf: mintIdentityId() } }),
      aggregate({ parent: { id: "org_p", name: "Parent" }, bindings: [], evidence: [] }),
      aggregate({ operator: { id: "org_ops", name: "Example Hosting Ltd" } }),
      aggregate({
        authority: [{ action: "payments.refund", context: "up to 100 EUR", grantedBy: null, expiresAt: null }],
      }),
    ];
    for (const source of variants) {
      const record = await publish(source);
      const response = await exports.default.fetch(`${BASE}/api/p/${record.identity_id}.json`);
      expect(errorsOf(await response.json())).toEqual([]);
    }
  });

  it("accepts every record the publisher would publish, across families, states and optional members", async () => {
    await fc.assert(
      fc.asyncProperty(aggregateArbitrary, async (source) => {
        const record = PassportRecord.parse(await sealRecord(projectPublicRecord(source, new Date().toISOString())));
        expect(errorsOf(JSON.parse(JSON.stringify(record)))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses what the record format forbids: nulls for absent members, unknown members, unknown states", async () => {
    const record = JSON.parse(
      JSON.stringify(await sealRecord(projectPublicRecord(aggregate(), "2026-10-22T10:00:00.000Z"))),
    );
    const broken = [
      { ...record, display_name: null },
      { ...record, secret: "x" },
      { ...record, state: { ...record.state, lifecycle: "deleted" } },
      { ...record, identity_id: "PSP_not-an-id" },
      { ...record, record_version: 0 },
      { ...record, published_at: "yesterday" },
    ];
    for (const value of broken) {
      expect(PassportRecord.safeParse(value).success).toBe(false);
      expect(errorsOf(value).length).toBeGreaterThan(0);
    }
  });
});

describe("the JSON Schema served at /schemas/passport-status.json", () => {
  it("is the one generated from the zod PassportStatus (run `pnpm run schemas` after changing the status token)", async () => {
    const response = await exports.default.fetch(`${BASE}/schemas/passport-status.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(passportStatusJsonSchema());
  });
});

describe("the JSON Schema served at /schemas/passport-policy.json", () => {
  it("is the one generated from the zod PassportPolicy (run `pnpm run schemas` after changing the policy)", async () => {
    const response = await exports.default.fetch(`${BASE}/schemas/passport-policy.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(passportPolicyJsonSchema());
  });
});
