import { exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import {
  DecisionReceipt,
  decisionReceiptJsonSchema,
  mintIdentityId,
  PassportRecord,
  passportPolicyJsonSchema,
  passportRecordJsonSchema,
  passportStatusJsonSchema,
  projectPublicRecord,
  sealRecord,
} from "@passport/domain";
import fc from "fast-check";
import { beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import {
  loadPolicy,
  Verifier,
  type DecisionReceipt as VerifierDecisionReceipt,
} from "../../packages/verifier/src/index.ts";
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
      aggregate({
        bindings: [
          {
            class: "endpoint",
            value: "https://staging.example.com/v1",
            label: null,
            boundAt: "2026-10-01T00:00:00.000Z",
            environment: "staging",
            version: "2.5.0-rc.1",
          },
        ],
        authority: [
          {
            action: "payments.*",
            context: null,
            grantedBy: null,
            expiresAt: "2099-01-01T00:00:00.000Z",
            resource: "org:acme/customers/*",
            amountValue: "100.00",
            amountCurrency: "EUR",
            rateCount: 10,
            ratePer: "hour",
            grantedByKind: "organisation",
            grantedById: "org_a",
            grantedByRelationship: "responsible",
            grantedByRole: "owner",
            grantedAt: "2026-10-01T00:00:00.000Z",
          },
        ],
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

describe("the JSON Schema served at /schemas/passport-decision-receipt.json (issue 27)", () => {
  let receipts: Validator;
  beforeAll(async () => {
    const response = await exports.default.fetch(`${BASE}/schemas/passport-decision-receipt.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/schema+json");
    const document = await response.json();
    expect(document).toEqual(decisionReceiptJsonSchema());
    receipts = new Validator(document as never, "2020-12", false);
  });
  const receiptErrors = (value: unknown) =>
    receipts.validate(value).errors.map((e) => `${e.instanceLocation}: ${e.error}`);

  it("is the zod DecisionReceipt, whose type is the verifier's DecisionReceipt", () => {
    expectTypeOf<DecisionReceipt>().toExtend<VerifierDecisionReceipt>();
    expectTypeOf<VerifierDecisionReceipt>().toExtend<DecisionReceipt>();
  });

  it("validates the receipts Verifier.decide gives against this resolver, whatever the decision and outcome", async () => {
    const active = await publish(aggregate());
    const suspended = await publish(aggregate({ passport: { lifecycle: "suspended" } }));
    const agent = await publish(aggregate({ passport: { family: "agent" } }));
    const verifier = new Verifier({
      resolver: BASE,
      fetch: (url, init) => exports.default.fetch(url, init),
      signature: "skip-insecure",
      cache: false,
    });
    const policy = loadPolicy({
      policy_format: "svc.passport_policy",
      version: 1,
      defaults: { family: "api", outcomes: { ok_signature_skipped: "allow", state_not_operative: "delay" } },
      actions: {
        read: { environments: ["production"] },
        refund: { authority: { amount: { value: "10.00", currency: "EUR" } } },
        staging: { environments: ["staging"], outcomes: { environment_or_version_mismatch: "challenge" } },
      },
    });
    const asked: [string, string][] = [
      [active.identity_id, "read"],
      [active.identity_id, "refund"],
      [active.identity_id, "staging"],
      [suspended.identity_id, "read"],
      [agent.identity_id, "read"],
      [mintIdentityId(), "read"],
      ["psp_not-an-id", "read"],
    ];
    const seen = { decisions: new Set<string>(), outcomes: new Set<string>() };
    for (const [id, action] of asked) {
      const { receipt } = await verifier.decide(id, { policy, action });
      const sent = JSON.parse(JSON.stringify(receipt));
      expect(receiptErrors(sent), `${action} on ${id}`).toEqual([]);
      expect(DecisionReceipt.safeParse(sent).success).toBe(true);
      seen.decisions.add(receipt.decision);
      seen.outcomes.add(receipt.outcome);
    }
    // The receipts differ where the schema has choices: several decisions and outcome classes.
    expect([...seen.decisions].sort()).toEqual(["allow", "challenge", "delay", "deny"]);
    expect(seen.outcomes).toEqual(
      new Set([
        "ok_signature_skipped",
        "environment_or_version_mismatch",
        "state_not_operative",
        "family_mismatch",
        "not_found",
        "malformed_id",
      ]),
    );
  });

  it("validates a receipt with every optional member, and refuses what a receipt never holds", () => {
    const side = {
      identity_id: "psp_3zpvzn56yppjmnvng3q2zzgkar",
      record_version: 4,
      digest: `sha-256:${"A".repeat(43)}`,
      kid: "record-signing-1",
      log: {
        origin: "passport.localhost/log",
        index: 3,
        size: 5,
        root_hash: "oVkyOv0iP4Yt1bP4bCEXrjqyQxfrB0E5t4ddK2MShu0=",
      },
      status: { issued_at: "2026-11-24T23:32:32.000Z", kid: "record-signing-1", digest: `sha-256:${"B".repeat(43)}` },
    };
    const full: VerifierDecisionReceipt = {
      receipt_format: "svc.passport_decision",
      version: 1,
      decided_at: "2026-11-24T23:32:32.824Z",
      action: "refund",
      policy_digest: `sha-256:${"C".repeat(43)}`,
      decision: "deny",
      outcome: "ok",
      subject: side,
      caller: { ...side, identity_id: "psp_k03khmq2ren546nj2zrpdtsmdz" },
      checks: [
        { check: "record", result: "passed" },
        { check: "caller.uses_link", result: "failed", detail: "link_missing" },
        { check: "authority", result: "not_checked" },
      ],
    };
    expect(receiptErrors(full)).toEqual([]);
    expect(DecisionReceipt.parse(full)).toEqual(full);
    const broken = [
      { ...full, secret: "x" },
      { ...full, version: 2 },
      { ...full, decision: "maybe" },
      { ...full, outcome: "fine" },
      { ...full, policy_digest: "md5:abc" },
      { ...full, decided_at: "yesterday" },
      { ...full, subject: { ...side, log: { ...side.log, index: -1 } } },
      { ...full, subject: { ...side, status: { ...side.status, digest: "x" } } },
      { ...full, checks: [{ check: "record", result: "skipped" }] },
      { ...full, caller: null },
    ];
    for (const value of broken) {
      expect(DecisionReceipt.safeParse(value).success, JSON.stringify(value).slice(0, 80)).toBe(false);
      expect(receiptErrors(value).length).toBeGreaterThan(0);
    }
  });
});
