import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { queueNames } from "../../workers/control/src/queues.ts";
import { developmentToken } from "../support/tokens.ts";
import {
  acquisitionState,
  claim,
  deliver,
  deliverToDeadLetterQueue,
  freshAccountId,
  handoff,
  holdingsOf,
  type RegistrationOptions,
  subscribe,
} from "./support.ts";

interface StageRow {
  stage: string;
  status: string;
  attempts: number;
  error_code: string | null;
  error_message: string | null;
}

async function stage(acquisitionId: string, name: string): Promise<StageRow | null> {
  return env.DB.prepare(
    "SELECT stage, status, attempts, error_code, error_message FROM acquisition_stages WHERE acquisition_id = ? AND stage = ?",
  )
    .bind(acquisitionId, name)
    .first<StageRow>();
}

async function nothingCreatedFor(account: string) {
  const holdings = await holdingsOf(account);
  expect(holdings).toEqual({ accounts: [], organisations: [], passports: [] });
  const customers = await env.DB.prepare("SELECT count(*) AS n FROM marketplace_customers WHERE aws_account_id = ?")
    .bind(account)
    .first<{ n: number }>();
  expect(customers?.n).toBe(0);
}

async function handoffFor(options: RegistrationOptions) {
  const account = freshAccountId();
  const registration = await subscribe({ customer_aws_account_id: account, ...options });
  return { account, ...(await handoff(registration.registration_token)) };
}

describe("non-retryable marketplace errors fail the acquisition at that stage and create nothing", () => {
  it.each([
    ["InvalidTokenException", { scenario: "ok" as const }, "contact_support", /did not accept.*Contact support/],
    ["ExpiredTokenException", { scenario: "expired" as const }, "contact_support", /expired.*Contact support/],
    ["DisabledApiException", { scenario: "disabled" as const }, "contact_support", /Contact support/],
  ])("%s", async (errorType, options, next, visible) => {
    const account = freshAccountId();
    const registration = await subscribe({ customer_aws_account_id: account, ...options });
    // An invalid token is one the marketplace never issued.
    const token =
      errorType === "InvalidTokenException" ? `${registration.registration_token}x` : registration.registration_token;
    const { acquisitionId, message } = await handoff(token);

    expect(await deliver(message)).toEqual({ acked: true, retried: false });

    expect(await acquisitionState(acquisitionId)).toMatchObject({
      status: "failed",
      failed_stage: "customer_identification",
      error_code: errorType,
      passport_id: null,
    });
    const failed = await stage(acquisitionId, "customer_identification");
    expect(failed).toMatchObject({ status: "failed", error_code: errorType });
    expect(failed?.error_message).toMatch(visible);
    expect(await stage(acquisitionId, "account")).toBeNull();
    await nothingCreatedFor(account);
    const { nextStep } = await import("../../workers/control/src/marketplace/stages.ts");
    expect(nextStep("failed")).toBe(next);
  });

  it("an unknown product code fails at product mapping", async () => {
    const { account, acquisitionId, message } = await handoffFor({ product_code: "prod-unknown-listing" });
    expect(await deliver(message)).toMatchObject({ acked: true, retried: false });
    expect(await acquisitionState(acquisitionId)).toMatchObject({
      status: "failed",
      failed_stage: "product_mapping",
      error_code: "UnknownProductCode",
    });
    expect((await stage(acquisitionId, "product_mapping"))?.error_message).toContain("prod-unknown-listing");
    expect(await stage(acquisitionId, "customer_identification")).toMatchObject({ status: "succeeded" });
    await nothingCreatedFor(account);
  });

  it("a customer without an entitlement fails at activation", async () => {
    const { account, acquisitionId, message } = await handoffFor({ scenario: "not-entitled" });
    expect(await deliver(message)).toMatchObject({ acked: true, retried: false });
    expect(await acquisitionState(acquisitionId)).toMatchObject({
      status: "failed",
      failed_stage: "activation",
      error_code: "NotEntitled",
    });
    await nothingCreatedFor(account);
  });

  it("an entitlement whose expiry cannot be read counts as no entitlement", async () => {
    const { account, acquisitionId, message } = await handoffFor({ scenario: "unreadable-expiry" });
    expect(await deliver(message)).toMatchObject({ acked: true, retried: false });
    expect(await acquisitionState(acquisitionId)).toMatchObject({
      status: "failed",
      failed_stage: "activation",
      error_code: "NotEntitled",
    });
    await nothingCreatedFor(account);
  });
});

describe("retryable marketplace errors are retried with backoff", () => {
  it("ThrottlingException: retried after 2 s, then completes with one account, parent and passport", async () => {
    const { account, acquisitionId, claimReference, message } = await handoffFor({ scenario: "throttle", failures: 1 });

    expect(await deliver(message, 1)).toEqual({ acked: false, retried: true });
    expect(await acquisitionState(acquisitionId)).toMatchObject({ status: "processing" });
    const retrying = await stage(acquisitionId, "customer_identification");
    expect(retrying).toMatchObject({ status: "retrying", attempts: 1, error_code: "ThrottlingException" });
    expect(retrying?.error_message).toMatch(/retried automatically.*next one follows in 2 s/);
    await nothingCreatedFor(account);

    expect(await deliver(message, 2)).toMatchObject({ acked: true, retried: false });
    expect(await acquisitionState(acquisitionId)).toMatchObject({ status: "completed" });
    expect(await stage(acquisitionId, "customer_identification")).toMatchObject({
      status: "succeeded",
      attempts: 2,
      error_code: null,
    });
    expect((await holdingsOf(account)).accounts).toHaveLength(0);
    expect((await claim(await developmentToken(), acquisitionId, claimReference)).status).toBe(200);
    const holdings = await holdingsOf(account);
    expect([holdings.accounts.length, holdings.organisations.length, holdings.passports.length]).toEqual([1, 2, 1]);
  });

  it("InternalServiceErrorException: the delay doubles per attempt", async () => {
    const { acquisitionId, message } = await handoffFor({ scenario: "internal", failures: 2 });
    expect(await deliver(message, 1)).toMatchObject({ retried: true });
    expect((await stage(acquisitionId, "customer_identification"))?.error_message).toMatch(/in 2 s\.$/);
    expect(await deliver(message, 2)).toMatchObject({ retried: true });
    const second = await stage(acquisitionId, "customer_identification");
    expect(second).toMatchObject({ error_code: "InternalServiceErrorException", attempts: 2 });
    expect(second?.error_message).toMatch(/in 4 s\.$/);
    expect(await deliver(message, 3)).toMatchObject({ acked: true });
    expect(await acquisitionState(acquisitionId)).toMatchObject({ status: "completed" });
  });

  it("throttling of the entitlement check is retried at the activation stage", async () => {
    const { acquisitionId, message } = await handoffFor({ scenario: "entitlement-throttle", failures: 1 });
    expect(await deliver(message, 1)).toMatchObject({ retried: true });
    expect(await stage(acquisitionId, "activation")).toMatchObject({
      status: "retrying",
      error_code: "ThrottlingException",
    });
    // The token was already redeemed; the retry does not need it again.
    expect(await stage(acquisitionId, "customer_identification")).toMatchObject({ status: "succeeded" });
    expect(await deliver(message, 2)).toMatchObject({ acked: true });
    expect(await acquisitionState(acquisitionId)).toMatchObject({ status: "completed" });
  });

  it("exhausted retries land in the dead-letter queue and are visible on the acquisition", async () => {
    const { account, acquisitionId, message } = await handoffFor({ scenario: "internal", failures: 100 });
    expect(await deliver(message, 1)).toMatchObject({ retried: true });
    expect(await deliverToDeadLetterQueue(message)).toMatchObject({ acked: true });

    expect(await acquisitionState(acquisitionId)).toMatchObject({
      status: "failed",
      failed_stage: "customer_identification",
      error_code: "RetriesExhausted",
    });
    expect((await stage(acquisitionId, "customer_identification"))?.error_message).toMatch(
      /kept failing.*Last error: InternalServiceErrorException/,
    );
    // A late redelivery of the original message changes nothing.
    expect(await deliver(message, 2)).toMatchObject({ acked: true });
    expect(await acquisitionState(acquisitionId)).toMatchObject({ status: "failed" });
    await nothingCreatedFor(account);
  });

  // The deploy names another environment's queues with its name (scripts/deploy/config.ts); the
  // consumer must know them as what they are, or staging would run a dead letter as a new delivery.
  it.each(["staging", "eu-2"])(
    "a dead letter of the %s environment's queue fails the acquisition, running nothing",
    async (environment) => {
      const { account, acquisitionId, message } = await handoffFor({ scenario: "internal", failures: 100 });
      expect(await deliver(message, 1, queueNames(environment).acquisitions)).toMatchObject({ retried: true });
      expect(await deliverToDeadLetterQueue(message, environment)).toMatchObject({ acked: true });
      expect(await acquisitionState(acquisitionId)).toMatchObject({
        status: "failed",
        failed_stage: "customer_identification",
        error_code: "RetriesExhausted",
      });
      // One attempt only: the dead letter did not call the marketplace again.
      expect(await stage(acquisitionId, "customer_identification")).toMatchObject({ attempts: 1 });
      await nothingCreatedFor(account);
    },
  );

  it("a batch from a queue the control plane does not own is retried, never run", async () => {
    const { acquisitionId, message } = await handoffFor({ scenario: "internal", failures: 100 });
    const before = await acquisitionState(acquisitionId);
    expect(await deliver(message, 1, "orders-acquisitions")).toEqual({ acked: false, retried: true });
    expect(await acquisitionState(acquisitionId)).toEqual(before);
    expect(await stage(acquisitionId, "customer_identification")).toBeNull();
  });
});

describe("customer keys", () => {
  it("keys a current integration on CustomerAWSAccountId + LicenseArn", async () => {
    const account = freshAccountId();
    const registration = await subscribe({ customer_aws_account_id: account });
    const { message } = await handoff(registration.registration_token);
    await deliver(message);
    const row = await env.DB.prepare(
      "SELECT customer_key, customer_identifier FROM marketplace_customers WHERE aws_account_id = ?",
    )
      .bind(account)
      .first();
    expect(row).toEqual({ customer_key: `license:${account}:${registration.license_arn}`, customer_identifier: null });
  });

  it("keys a legacy product on CustomerIdentifier + ProductCode", async () => {
    const account = freshAccountId();
    const registration = await subscribe({ customer_aws_account_id: account, legacy: true });
    expect(registration.license_arn).toBeNull();
    const { acquisitionId, message } = await handoff(registration.registration_token);
    await deliver(message);
    expect(await acquisitionState(acquisitionId)).toMatchObject({ status: "completed" });
    const row = await env.DB.prepare("SELECT customer_key FROM marketplace_customers WHERE aws_account_id = ?")
      .bind(account)
      .first<{ customer_key: string }>();
    expect(row?.customer_key).toBe(`legacy:${registration.customer_identifier}:prod-passport-api`);
  });
});

describe("the marketplace simulator", () => {
  it("refuses unsigned requests the way AWS JSON services do", async () => {
    const response = await env.MARKETPLACE_SIM.fetch("http://marketplace.test/", {
      method: "POST",
      headers: { "content-type": "application/x-amz-json-1.1", "x-amz-target": "AWSMPMeteringService.ResolveCustomer" },
      body: JSON.stringify({ RegistrationToken: "anything" }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("x-amzn-errortype")).toMatch(/^MissingAuthenticationTokenException:/);
    expect(await response.json()).toMatchObject({
      __type: "com.amazonaws.awsmpmetering#MissingAuthenticationTokenException",
    });
  });
});
