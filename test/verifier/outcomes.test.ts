import { env } from "cloudflare:workers";
import { mintIdentityId } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { IDENTITY_IS_NOT_AUTHORIZATION } from "../../packages/verifier/src/index.ts";
import { settleFinishedReevaluations } from "../../workers/control/src/binding-checks/reevaluation.ts";
import { database } from "../../workers/control/src/db/client.ts";
import { resolve as resolveRaw } from "../support/api.ts";
import { shardOfIdentity } from "../support/shards.ts";
import {
  ATTESTED,
  asserted,
  contractRecord,
  daysAgo,
  NOW,
  Owner,
  observed,
  RESOLVER,
  RecordServer,
  recording,
  verifierFor,
} from "./support.ts";

/** Every outcome carries the authorization statement, whatever its class. */
function expectNotAuthorization(result: { identity_is_not_authorization: boolean; authorization_note: string }) {
  expect(result.identity_is_not_authorization).toBe(true);
  expect(result.authorization_note).toBe(IDENTITY_IS_NOT_AUTHORIZATION);
}

function mistype(id: string): string {
  const last = id.charAt(id.length - 2);
  return `${id.slice(0, -2)}${last === "0" ? "1" : "0"}${id.slice(-1)}`;
}

describe("verify: outcome classes from records the real resolver serves", () => {
  it("ok: an active API passport that meets every stated expectation, with the fields relied on", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const served = (await resolveRaw(id)).record;

    const result = await verifierFor().verify(id, {
      family: "api",
      organisation: owner.organisation,
      environment: "production",
      version: "2026-10",
      consequence: "higher",
      maxAge: 60,
    });

    expect(result.outcome).toBe("ok");
    if (result.outcome !== "ok") return;
    expect(result.ok).toBe(true);
    expect(result.next_step).toBe("proceed");
    expect(result.findings).toEqual([]);
    expect(result.unchecked).toEqual(["bindings", "evidence"]);
    expect(result.proof).toMatchObject({ digest: "verified", signature: "verified" });
    expectNotAuthorization(result);
    expect(result.relied_on).toMatchObject({
      identity_id: id,
      family: "api",
      organisation: { id: owner.organisation },
      state: { lifecycle: "active", environment: "production", version: "2026-10", as_of: served.state.as_of },
      record_version: served.record_version,
      digest: served.digest,
    });
    expect(result.source).toMatchObject({
      url: `${RESOLVER}/api/p/${id}.json`,
      etag: `"${served.digest}"`,
      from_cache: false,
      attempts: 1,
    });
  });

  it("an endpoint the owner typed in and evidence it wrote itself never make ok: binding_unverified, and the evidence does not count", async () => {
    const owner = await Owner.create();
    const { id, endpoint } = await owner.apiPassport();
    await owner.evidence(id, { claim: "organisation.domain_control", observed_at: daysAgo(2) });
    const result = await verifierFor().verify(id, {
      family: "api",
      baseUrl: `${endpoint}/charges`,
      evidence: [{ claim: "organisation.domain_control", maxAge: "30d" }],
    });
    expect(result).toMatchObject({
      outcome: "binding_unverified",
      next_step: "challenge",
      unverified: [{ class: "endpoint", value: endpoint, state: "claimed" }],
    });
    expect(result.findings[1]).toMatchObject({
      outcome: "missing_evidence",
      missing_claims: ["organisation.domain_control"],
      not_counted: [{ claim: "organisation.domain_control", source: "verifier test", why: "not_observed" }],
    });
  });

  it("ok lists what the expectation left unchecked, so a bare check is not mistaken for a full one", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const result = await verifierFor().verify(id);
    expect(result.outcome).toBe("ok");
    if (result.outcome === "ok") {
      expect(result.unchecked).toEqual([
        "family",
        "organisation",
        "environment",
        "version",
        "bindings",
        "evidence",
        "maximum record age",
      ]);
    }
  });

  it("not_found: a well-formed id that was never issued, with no fallback identity", async () => {
    const unknown = mintIdentityId();
    const result = await verifierFor().verify(unknown, { family: "api" });
    expect(result).toMatchObject({
      outcome: "not_found",
      ok: false,
      identity_id: unknown,
      next_step: "deny",
      resolver_url: RESOLVER,
      relied_on: {},
      findings: [],
    });
    expect(result.source).toBeUndefined();
    expectNotAuthorization(result);
  });

  it("malformed_id: a mistyped id is caught locally, without asking the resolver", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const { fetch, calls } = recording();
    const result = await verifierFor({ fetch }).verify(mistype(id));
    expect(result).toMatchObject({ outcome: "malformed_id", defect: "check_character", next_step: "challenge" });
    expect(calls).toHaveLength(0);
    expectNotAuthorization(result);
  });

  it("malformed_id: the resolver's own refusal (400 malformed-identity-id) is reported as such, not as not_found", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    // A resolver reached through a proxy that damages the id in transit: the 400 is the real resolver's.
    const { fetch, calls } = recording((input, init) =>
      recording().fetch(input.replace(id, id.toUpperCase().replace("PSP_", "psp_")), init),
    );
    const result = await verifierFor({ fetch }).verify(id);
    expect(calls[0]?.status).toBe(400);
    expect(result.outcome).toBe("malformed_id");
    if (result.outcome === "malformed_id") {
      expect(result.defect).toBeUndefined();
      expect(result.detail).toMatch(/lowercase/);
    }
  });

  it("family_mismatch: an agent passport where an API passport is expected", async () => {
    const owner = await Owner.create();
    const created = await owner.caller.createPassport({
      family: "agent",
      bindings: [{ class: "manifest", value: `https://${crypto.randomUUID()}.agents.example/card.json` }],
    });
    const result = await verifierFor().verify(created.identity_id, { family: "api" });
    expect(result).toMatchObject({
      outcome: "family_mismatch",
      expected: "api",
      actual: "agent",
      next_step: "deny",
      relied_on: { family: "agent" },
    });
    expectNotAuthorization(result);
  });

  it("organisation_mismatch: another organisation claims responsibility", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const result = await verifierFor().verify(id, { family: "api", organisation: "org_expected_elsewhere" });
    expect(result).toMatchObject({
      outcome: "organisation_mismatch",
      next_step: "challenge",
      expected: { id: "org_expected_elsewhere" },
      actual: { id: owner.organisation, relationship: "responsible" },
      relied_on: { organisation: { id: owner.organisation } },
    });
  });

  it("environment_or_version_mismatch: a production passport checked for staging", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const result = await verifierFor().verify(id, { environment: "staging", version: "2026-10" });
    expect(result).toMatchObject({
      outcome: "environment_or_version_mismatch",
      next_step: "deny",
      mismatches: [{ field: "environment", expected: "staging", actual: "production" }],
      relied_on: { state: { environment: "production", version: "2026-10" } },
    });
  });

  it("environment_or_version_mismatch: a version the record does not state is not established", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport({ version: undefined });
    const result = await verifierFor().verify(id, { version: "2026-10" });
    expect(result.outcome).toBe("environment_or_version_mismatch");
    if (result.outcome === "environment_or_version_mismatch") {
      expect(result.mismatches).toEqual([{ field: "version", expected: "2026-10" }]);
    }
  });

  it("binding_mismatch: the address about to be called is not bound to the passport", async () => {
    const owner = await Owner.create();
    const { id, endpoint } = await owner.apiPassport();
    const lookalike = endpoint.replace(/\/v1$/, "/v10");
    const result = await verifierFor().verify(id, { baseUrl: lookalike });
    expect(result).toMatchObject({
      outcome: "binding_mismatch",
      next_step: "deny",
      missing: [{ class: "endpoint", value: lookalike }],
      bound: [{ class: "endpoint", value: endpoint }],
    });
  });

  it("binding_mismatch: a required binding class that is absent is never inferred", async () => {
    const owner = await Owner.create();
    const { id, endpoint } = await owner.apiPassport();
    const result = await verifierFor().verify(id, {
      baseUrl: endpoint,
      bindings: [{ class: "openapi" }],
    });
    expect(result).toMatchObject({ outcome: "binding_mismatch", missing: [{ class: "openapi" }], bound: [] });
  });

  it("missing_evidence: required claims without evidence are named, and other claims do not stand in", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    await owner.evidence(id, { claim: "organisation.domain_control", observed_at: daysAgo(1) });
    const result = await verifierFor().verify(id, {
      evidence: ["organisation.domain_control", "api.security_review", "api.uptime_sla"],
    });
    expect(result).toMatchObject({
      outcome: "missing_evidence",
      next_step: "challenge",
      // The member's own evidence is asserted from an untrusted source: named, but not counted.
      missing_claims: ["organisation.domain_control", "api.security_review", "api.uptime_sla"],
      not_counted: [{ claim: "organisation.domain_control", why: "not_observed" }],
    });
  });

  it("stale: evidence older than the claim's maximum age, with its age", async () => {
    const server = await RecordServer.create();
    const base = contractRecord();
    const old = {
      ...observed("evd_dns", "organisation.domain_control", "contract.example"),
      observed_at: daysAgo(40, NOW),
    };
    const { identity_id: id } = await server.publish({ ...base, evidence: [...base.evidence, old] });
    const result = await server.verifier().verify(id, {
      evidence: [{ claim: "organisation.domain_control", maxAge: "30d" }],
    });
    expect(result).toMatchObject({ outcome: "stale", next_step: "re-resolve" });
    if (result.outcome === "stale") {
      const [item] = result.stale;
      expect(item).toMatchObject({
        what: "evidence",
        claim: "organisation.domain_control",
        max_age_seconds: 30 * 86_400,
      });
      expect(item?.age_seconds).toBeGreaterThanOrEqual(40 * 86_400);
      expect(item?.age_seconds).toBeLessThan(41 * 86_400);
    }
  });

  it("stale: evidence whose own fresh_until has passed", async () => {
    const server = await RecordServer.create();
    const freshUntil = daysAgo(1, NOW);
    const review = asserted("evd_review", "api.pen_test", {
      ...ATTESTED,
      observed_at: daysAgo(100, NOW),
      fresh_until: freshUntil,
    });
    const { identity_id: id } = await server.publish(contractRecord({ evidence: [review] }));
    const result = await server.verifier().verify(id, { evidence: ["api.pen_test"] });
    expect(result).toMatchObject({
      outcome: "stale",
      stale: [{ what: "evidence", claim: "api.pen_test", fresh_until: freshUntil }],
    });
  });

  it("stale: a reactivated passport awaiting its re-check; delay until the re-check passed", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    await owner.state(id, { lifecycle: "suspended" });
    await owner.state(id, { lifecycle: "active" });
    const result = await verifierFor().verify(id, { family: "api" });
    expect(result).toMatchObject({
      outcome: "stale",
      next_step: "delay",
      stale: [{ what: "recheck_required" }],
      relied_on: { state: { recheck_required: true } },
    });
    // Its one binding was never proven and it has no evidence: the scheduler's next run settles it.
    await settleFinishedReevaluations(env, database(await shardOfIdentity(id)));
    expect((await verifierFor().verify(id, { family: "api" })).outcome).toBe("ok");
  });

  it("stale: a copy older than the maximum record age (as reported by a cache on the way)", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const agedByCache = recording().fetch;
    const result = await verifierFor({
      fetch: async (input, init) => {
        const real = await agedByCache(input, init);
        const headers = new Headers(real.headers);
        headers.set("age", "600");
        return new Response(real.body, { status: real.status, headers });
      },
    }).verify(id, { maxAge: "5m" });
    expect(result).toMatchObject({ outcome: "stale", stale: [{ what: "record", max_age_seconds: 300 }] });
  });

  it.each([
    ["suspended", "delay"],
    ["revoked", "deny"],
    ["retired", "deny"],
  ] as const)("state_not_operative: a %s passport (next step %s)", async (lifecycle, step) => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    await owner.state(id, { lifecycle });
    const result = await verifierFor().verify(id, { family: "api", environment: "production" });
    expect(result).toMatchObject({
      outcome: "state_not_operative",
      next_step: step,
      state: { lifecycle },
      relied_on: { state: { lifecycle } },
    });
    expectNotAuthorization(result);
  });

  it("state_not_operative: a degraded availability signal", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    await owner.state(id, { availability: "degraded" });
    const result = await verifierFor().verify(id);
    expect(result).toMatchObject({
      outcome: "state_not_operative",
      next_step: "delay",
      state: { lifecycle: "active", availability: "degraded" },
    });
    expect((await verifierFor().verify(id, { availability: ["available", "degraded"] })).outcome).toBe("ok");
  });

  it("state_not_operative: a passport retired as a duplicate is never swapped for its survivor", async () => {
    const owner = await Owner.create();
    const survivor = await owner.apiPassport();
    const duplicate = await owner.apiPassport();
    await owner.caller.json("POST", `/v1/passports/${duplicate.id}/duplicate-of`, {
      survivor_id: survivor.id,
      reason: "created twice",
    });
    const result = await verifierFor().verify(duplicate.id, { lifecycle: ["active", "retired"] });
    expect(result).toMatchObject({
      outcome: "state_not_operative",
      identity_id: duplicate.id,
      next_step: "challenge",
      state: { duplicate_of: survivor.id },
    });
  });

  it("keeps every failed check distinct: the outcome is the first, findings list them all", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    await owner.state(id, { lifecycle: "suspended" });
    const result = await verifierFor().verify(id, {
      environment: "staging",
      baseUrl: "https://elsewhere.example/v1",
      evidence: ["api.security_review"],
    });
    expect(result.outcome).toBe("state_not_operative");
    expect(result.findings.map((f) => f.outcome)).toEqual([
      "state_not_operative",
      "environment_or_version_mismatch",
      "binding_mismatch",
      "missing_evidence",
    ]);
  });
});
