import { env, exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { keyedHash } from "../../workers/control/src/marketplace/crypto.ts";
import { developmentToken } from "../support/tokens.ts";
import { api, claim, deliver, freshAccountId, handoff, holdingsOf, postFulfill, subscribe } from "./support.ts";

async function acquisitionsAt(createdAt: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM acquisitions WHERE created_at = ?")
    .bind(createdAt)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

async function acquisitionForToken(token: string) {
  const hash = await keyedHash(env.MARKETPLACE_TOKEN_HASH_KEY, "registration-token", token);
  return env.DB.prepare("SELECT id FROM acquisitions WHERE token_hash = ?").bind(hash).first();
}

/** A completed acquisition of a fresh account, not yet claimed. */
async function completedAcquisition(account = freshAccountId()) {
  const registration = await subscribe({ customer_aws_account_id: account });
  const handed = await handoff(registration.registration_token);
  expect(await deliver(handed.message)).toMatchObject({ acked: true });
  return { account, ...handed };
}

describe("POST /marketplace/fulfill without a usable token", () => {
  it("answers problem+json with the stage and time, and creates nothing", async () => {
    const response = await postFulfill(undefined, "application/json");
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const body = await response.json<Record<string, string>>();
    expect(body).toMatchObject({
      type: "urn:svc:passport:problem:invalid-registration-token",
      status: 400,
      stage: "registration_token_handoff",
      next: "restart_setup",
    });
    expect(body.detail).toMatch(/did not pass a registration token/);
    expect(new Date(body.occurred_at as string).toISOString()).toBe(body.occurred_at);
    expect(await acquisitionsAt(body.occurred_at as string)).toBe(0);
  });

  it("shows a browser an error page naming the stage and the time", async () => {
    const response = await postFulfill("");
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain("Registration-token handoff");
    expect(page).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">/);
    expect(page).toContain("Set up your account");
  });

  it("refuses a malformed token without echoing it or recording it", async () => {
    const malformed = "not a token <script>alert(1)</script>";
    const response = await postFulfill(malformed, "application/problem+json");
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).toContain("malformed");
    expect(text).not.toContain("script");
    expect(await acquisitionForToken(malformed)).toBeNull();
  });

  it("refuses a body that is not a form", async () => {
    const response = await exports.default.fetch("http://control.test/marketplace/fulfill", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ "x-amzn-marketplace-token": "abc" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: "urn:svc:passport:problem:invalid-registration-token" });
  });
});

describe("claiming an acquisition", () => {
  it("lets nobody see progress without the claim reference or a membership", async () => {
    const { acquisitionId, claimReference } = await completedAcquisition();
    const stranger = await developmentToken();
    expect((await api(stranger, "GET", `/v1/acquisitions/${acquisitionId}`)).status).toBe(404);
    const wrongReference = await api(stranger, "GET", `/v1/acquisitions/${acquisitionId}`, undefined, {
      "x-claim-reference": `${claimReference}x`,
    });
    expect(wrongReference.status).toBe(404);
    expect((await api(stranger, "GET", "/v1/acquisitions/acq_nonexistent")).status).toBe(404);
  });

  it("answers progress and the claim in the shape the OpenAPI document declares", async () => {
    const { acquisitionId, claimReference } = await completedAcquisition();
    const owner = await developmentToken();
    const document = await (await exports.default.fetch("http://control.test/openapi.json")).json<{
      components: { schemas: Record<string, object> };
    }>();
    const schema = document.components.schemas.AcquisitionView;
    expect(schema, "AcquisitionView is declared").toBeDefined();
    const validator = new Validator(schema as never, "2020-12", false);
    const claimed = await claim(owner, acquisitionId, claimReference);
    const progress = await api(owner, "GET", `/v1/acquisitions/${acquisitionId}`);
    for (const response of [claimed, progress]) {
      expect(response.status).toBe(200);
      const result = validator.validate(await response.json());
      expect(result.errors, JSON.stringify(result.errors.slice(0, 3))).toEqual([]);
    }
  });

  it("refuses a wrong claim reference and a reference already used by someone else", async () => {
    const { acquisitionId, claimReference } = await completedAcquisition();
    const owner = await developmentToken();
    const other = await developmentToken();

    const wrong = await claim(other, acquisitionId, "clm_wrong");
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({ type: "urn:svc:passport:problem:claim-reference-invalid" });

    expect((await claim(owner, acquisitionId, claimReference)).status).toBe(200);
    // Single use: the same reference does nothing for a second user...
    expect((await claim(other, acquisitionId, claimReference)).status).toBe(403);
    // ...and the first claimant repeating the claim just sees the result again.
    const again = await claim(owner, acquisitionId, claimReference);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ existing_account: true, claimed_by_you: true });
    expect((await api(other, "GET", `/v1/acquisitions/${acquisitionId}`)).status).toBe(404);
  });

  it("refuses a second subscription's claim by a user outside the existing account, then recognises its owner", async () => {
    const account = freshAccountId();
    const owner = await developmentToken();
    const first = await completedAcquisition(account);
    expect((await claim(owner, first.acquisitionId, first.claimReference)).status).toBe(200);

    const second = await completedAcquisition(account);
    const outsider = await developmentToken();
    const refused = await claim(outsider, second.acquisitionId, second.claimReference);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ type: "urn:svc:passport:problem:forbidden" });

    // The refusal did not use the reference up: the account's owner can still claim with it.
    const recognised = await claim(owner, second.acquisitionId, second.claimReference);
    expect(recognised.status).toBe(200);
    expect(await recognised.json()).toMatchObject({ existing_account: true, account: { outcome: "reused" } });
    const holdings = await holdingsOf(account);
    expect([holdings.accounts.length, holdings.organisations.length, holdings.passports.length]).toEqual([1, 2, 1]);
    const members = await env.DB.prepare("SELECT subject, role FROM members WHERE organisation_id = ?")
      .bind(holdings.accounts[0]?.organisation_id)
      .all();
    expect(members.results).toHaveLength(1);
  });

  it("asks the customer to wait while set-up runs, and explains a failure", async () => {
    const registration = await subscribe({ customer_aws_account_id: freshAccountId(), scenario: "expired" });
    const { acquisitionId, claimReference, message } = await handoff(registration.registration_token);
    const user = await developmentToken();

    const early = await claim(user, acquisitionId, claimReference);
    expect(early.status).toBe(409);
    expect(early.headers.get("retry-after")).toBe("2");

    await deliver(message);
    const failed = await claim(user, acquisitionId, claimReference);
    expect(failed.status).toBe(409);
    expect(await failed.json()).toMatchObject({
      type: "urn:svc:passport:problem:acquisition-not-ready",
      stage: "customer_identification",
    });
    const progress = await api(user, "GET", `/v1/acquisitions/${acquisitionId}`, undefined, {
      "x-claim-reference": claimReference,
    });
    const view = await progress.json<{ support: unknown }>();
    expect(view).toMatchObject({
      status: "failed",
      next: "contact_support",
      error: { stage: "customer_identification", code: "ExpiredTokenException" },
      passport: null,
    });
    // Spec 7: what support needs (the stage, the time, the cloud-account context), never the token.
    expect(view.support).toMatchObject({
      acquisition_id: acquisitionId,
      stage: "customer_identification",
      stage_label: "Customer identification",
      error_code: "ExpiredTokenException",
      cloud_account: { aws_account_id: null, product_code: null },
    });
    expect(JSON.stringify(view)).not.toContain(registration.registration_token);
  });

  it("gives support the cloud account and product when activation fails", async () => {
    const account = freshAccountId();
    const registration = await subscribe({ customer_aws_account_id: account, scenario: "not-entitled" });
    const { acquisitionId, claimReference, message } = await handoff(registration.registration_token);
    await deliver(message);
    const progress = await api(await developmentToken(), "GET", `/v1/acquisitions/${acquisitionId}`, undefined, {
      "x-claim-reference": claimReference,
    });
    const view = await progress.json<{ next: string; support: unknown }>();
    expect(view.next).toBe("contact_support");
    expect(view.support).toMatchObject({
      stage: "activation",
      error_code: "NotEntitled",
      cloud_account: { aws_account_id: account, product_code: registration.product_code },
    });
    expect(JSON.stringify(view)).not.toContain(registration.registration_token);
  });
});
