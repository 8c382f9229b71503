import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { developmentToken } from "../support/tokens.ts";
import { acquisitionState, api, claim, deliver, freshAccountId, handoff, holdingsOf, subscribe } from "./support.ts";

function postEvent(
  body: unknown,
  secret: string | null = env.MARKETPLACE_EVENTS_SECRET,
  contentType = "application/json",
) {
  return exports.default.fetch("http://control.test/marketplace/events", {
    method: "POST",
    headers: { "content-type": contentType, ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
    body: JSON.stringify(body),
  });
}

async function customerStatus(key: string) {
  return env.DB.prepare(
    "SELECT status, last_event, marketplace_account_id FROM marketplace_customers WHERE customer_key = ?",
  )
    .bind(key)
    .first<{ status: string; last_event: string; marketplace_account_id: string | null }>();
}

/**
 * An SNS Notification envelope signed by the simulator, as SNS signs one. The simulator names its
 * own origin in SigningCertURL, so it is asked at the origin the control plane trusts in development.
 */
async function signedEnvelope(
  message: Record<string, unknown>,
  options: { timestamp?: string; signature_version?: "1" | "2" } = {},
): Promise<Record<string, string>> {
  const response = await env.MARKETPLACE_SIM.fetch(`${env.MARKETPLACE_SNS_CERT_ORIGIN}/sim/sns/notifications`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message, ...options }),
  });
  expect(response.status).toBe(201);
  return response.json();
}

/** A completed acquisition: the agreement, its account and its passport exist. */
async function acquired(options: { legacy?: boolean } = {}) {
  const account = freshAccountId();
  const registration = await subscribe({ customer_aws_account_id: account, ...options });
  const { acquisitionId, claimReference, message } = await handoff(registration.registration_token);
  expect(await deliver(message)).toMatchObject({ acked: true });
  // A first-time cloud account gets its account and passport when the customer claims it.
  expect((await claim(await developmentToken(), acquisitionId, claimReference)).status).toBe(200);
  return { account, registration, holdings: await holdingsOf(account) };
}

function agreementEvent(detailType: string, account: string, licenseArn: string, time: string) {
  return {
    version: "0",
    id: crypto.randomUUID(),
    "detail-type": detailType,
    source: "aws.agreement-marketplace",
    account: "123456789012",
    time,
    region: "us-east-1",
    resources: [`arn:aws:aws-marketplace::agreement:agmt-${account}`],
    detail: {
      agreement: { id: `agmt-${account}`, intent: "NEW", status: "ACTIVE" },
      acceptor: { accountId: account },
      product: { code: "prod-passport-api" },
      licenseArn,
    },
  };
}

describe("POST /marketplace/events", () => {
  it("requires the shared bearer secret", async () => {
    const event = agreementEvent(
      "Purchase Agreement Ended - Manufacturer",
      freshAccountId(),
      "arn:x",
      "2026-10-20T00:00:00Z",
    );
    for (const secret of [null, "wrong"]) {
      const response = await postEvent(event, secret);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
    }
  });

  it("records an ended agreement on the customer's entitlement, idempotently, and keeps the passport", async () => {
    const { account, registration, holdings } = await acquired();
    const key = `license:${account}:${registration.license_arn}`;
    const ended = agreementEvent(
      "Purchase Agreement Ended - Manufacturer",
      account,
      registration.license_arn as string,
      new Date(Date.now() + 1000).toISOString(),
    );

    const first = await postEvent(ended);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ kind: "Purchase Agreement Ended", status: "ended", duplicate: false });
    expect(await customerStatus(key)).toEqual({
      status: "ended",
      last_event: "Purchase Agreement Ended",
      marketplace_account_id: holdings.accounts[0]?.id,
    });

    const replay = await postEvent(ended);
    expect(await replay.json()).toMatchObject({ duplicate: true });
    expect((await customerStatus(key))?.status).toBe("ended");

    // An older event arriving late does not undo the newer one.
    const stale = agreementEvent(
      "Purchase Agreement Created - Proposer",
      account,
      registration.license_arn as string,
      "2020-01-01T00:00:00Z",
    );
    expect(await (await postEvent(stale)).json()).toMatchObject({ duplicate: false });
    expect((await customerStatus(key))?.status).toBe("ended");

    // The identity is neither deleted nor repurposed.
    expect(await holdingsOf(account)).toEqual(holdings);
    const passport = holdings.passports[0]?.id;
    const resolved = await env.TEST_RESOLVER.fetch(`http://resolver.test/api/p/${passport}.json`);
    expect(resolved.status).toBe(200);
  });

  it("applies a License Deprovisioned event keyed on account and license", async () => {
    const { account, registration } = await acquired();
    const event = {
      version: "0",
      id: crypto.randomUUID(),
      "detail-type": "License Deprovisioned",
      source: "aws.marketplace",
      time: new Date(Date.now() + 1000).toISOString(),
      resources: [registration.license_arn],
      detail: { customerAWSAccountId: account, productCode: "prod-passport-api" },
    };
    expect(await (await postEvent(event)).json()).toMatchObject({ status: "deprovisioned", outcome: "applied" });
    expect((await customerStatus(`license:${account}:${registration.license_arn}`))?.status).toBe("deprovisioned");
  });

  it("accepts legacy SNS notifications in both key spellings", async () => {
    const { registration } = await acquired({ legacy: true });
    const key = `legacy:${registration.customer_identifier}:prod-passport-api`;
    const envelope = (message: Record<string, string>, offsetMs: number) =>
      signedEnvelope(message, { timestamp: new Date(Date.now() + offsetMs).toISOString() });

    const pending = await envelope(
      {
        action: "unsubscribe-pending",
        "customer-identifier": registration.customer_identifier as string,
        "product-code": "prod-passport-api",
      },
      1000,
    );
    // SNS delivers with text/plain.
    expect((await postEvent(pending, undefined, "text/plain; charset=UTF-8")).status).toBe(200);
    expect((await customerStatus(key))?.status).toBe("unsubscribe_pending");

    const success = await envelope(
      {
        action: "unsubscribe-success",
        CustomerIdentifier: registration.customer_identifier as string,
        ProductCode: "prod-passport-api",
      },
      2000,
    );
    expect(await (await postEvent(success)).json()).toMatchObject({ status: "ended", duplicate: false });
    expect((await customerStatus(key))?.status).toBe("ended");

    const entitlementUpdated = await envelope(
      {
        action: "entitlement-updated",
        "customer-identifier": registration.customer_identifier as string,
        "product-code": "prod-passport-api",
      },
      3000,
    );
    expect(await (await postEvent(entitlementUpdated)).json()).toMatchObject({ status: null, outcome: "recorded" });
    expect((await customerStatus(key))?.status).toBe("ended");
  });

  it("refuses what it cannot interpret, and SNS subscription confirmations", async () => {
    const unknown = await postEvent({ "detail-type": "Offer Released", id: crypto.randomUUID(), detail: {} });
    expect(unknown.status).toBe(400);
    const confirmation = await postEvent({ Type: "SubscriptionConfirmation", MessageId: "m", Message: "{}" });
    expect(confirmation.status).toBe(400);
    expect(await confirmation.json()).toMatchObject({ type: "urn:svc:passport:problem:invalid-request" });
  });

  it("refuses event names that are only names every object has, without writing anything", async () => {
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const bridged = await postEvent({ "detail-type": name, id: crypto.randomUUID(), detail: {} });
      expect(bridged.status).toBe(400);
      expect(await bridged.json()).toMatchObject({ type: "urn:svc:passport:problem:invalid-request" });
      const sns = await signedEnvelope({
        action: name,
        "customer-identifier": `c-${name}`,
        "product-code": "prod-passport-api",
      });
      const answer = await postEvent(sns);
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ type: "urn:svc:passport:problem:invalid-request" });
      expect(await customerStatus(`legacy:c-${name}:prod-passport-api`)).toBeNull();
    }
  });

  it("clamps an event dated far ahead to its receive time, so it cannot outrank later checks", async () => {
    const account = freshAccountId();
    const licenseArn = `arn:aws:license-manager::${account}:license:l-future`;
    const before = Date.now();
    const future = agreementEvent(
      "Purchase Agreement Ended - Manufacturer",
      account,
      licenseArn,
      "2099-01-01T00:00:00Z",
    );
    const answer = await (await postEvent(future)).json<{ status: string; occurred_at: string }>();
    expect(answer.status).toBe("ended");
    expect(Date.parse(answer.occurred_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(answer.occurred_at)).toBeLessThanOrEqual(Date.now());
    expect((await customerStatus(`license:${account}:${licenseArn}`))?.status).toBe("ended");

    // The same agreement can still be acquired afterwards: the event no longer reads as "2099".
    const registration = await subscribe({ customer_aws_account_id: account, license_arn: licenseArn });
    const { acquisitionId, message } = await handoff(registration.registration_token);
    expect(await deliver(message)).toMatchObject({ acked: true });
    expect(await acquisitionState(acquisitionId)).toMatchObject({ status: "completed" });
  });

  it("lets a newer successful entitlement check override an older ended event, but not a newer one", async () => {
    const account = freshAccountId();
    const licenseArn = `arn:aws:license-manager::${account}:license:l-renewed`;
    const key = `license:${account}:${licenseArn}`;
    const registration = await subscribe({ customer_aws_account_id: account, license_arn: licenseArn });
    const { acquisitionId, message } = await handoff(registration.registration_token);
    // Ended after the buyer's post but before the marketplace confirmed the entitlement below.
    const ended = agreementEvent(
      "Purchase Agreement Ended - Manufacturer",
      account,
      licenseArn,
      new Date().toISOString(),
    );
    expect((await postEvent(ended)).status).toBe(200);
    expect(await customerStatus(key)).toMatchObject({ status: "ended" });

    expect(await deliver(message)).toMatchObject({ acked: true });
    expect(await acquisitionState(acquisitionId)).toMatchObject({ status: "completed" });
    expect(await customerStatus(key)).toMatchObject({ status: "active", last_event: "resolved" });

    // An event dated after the check (within the clock-skew allowance) still wins.
    const again = await subscribe({ customer_aws_account_id: account, license_arn: licenseArn });
    const second = await handoff(again.registration_token);
    const later = new Date(Date.now() + 60_000).toISOString();
    await postEvent(agreementEvent("Purchase Agreement Ended - Manufacturer", account, licenseArn, later));
    expect(await deliver(second.message)).toMatchObject({ acked: true });
    expect(await acquisitionState(second.acquisitionId)).toMatchObject({ status: "failed", error_code: "NotEntitled" });
  });

  describe("SNS envelopes", () => {
    const message = (customer: string) => ({
      action: "unsubscribe-pending",
      "customer-identifier": customer,
      "product-code": "prod-passport-api",
    });

    it("accepts a genuine envelope signed with either signature version", async () => {
      for (const version of ["1", "2"] as const) {
        const envelope = await signedEnvelope(message(`cust-genuine-${version}`), { signature_version: version });
        const response = await postEvent(envelope);
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ status: "unsubscribe_pending", outcome: "applied" });
      }
    });

    it("refuses forged, altered and unsigned envelopes, and records nothing", async () => {
      const customer = `cust-forged-${crypto.randomUUID()}`;
      const genuine = await signedEnvelope(message(customer));
      const { Signature, SigningCertURL, SignatureVersion, ...unsigned } = genuine;
      const forgeries: Record<string, Record<string, string | undefined>> = {
        "altered message": {
          ...genuine,
          Message: JSON.stringify({ ...message(customer), action: "unsubscribe-success" }),
        },
        "altered timestamp": { ...genuine, Timestamp: "2099-01-01T00:00:00.000Z" },
        "another account's topic": {
          ...genuine,
          TopicArn: "arn:aws:sns:us-east-1:111122223333:aws-mp-subscription-notification-prod-passport-api",
        },
        "certificate from a non-SNS host": { ...genuine, SigningCertURL: "https://attacker.example/cert.pem" },
        "certificate over http from an SNS-like host": {
          ...genuine,
          SigningCertURL: "http://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem",
        },
        "unknown signature version": { ...genuine, SignatureVersion: "3" },
        "signature not base64": { ...genuine, Signature: "%%%" },
        unsigned,
      };
      expect(Signature && SigningCertURL && SignatureVersion).toBeTruthy();
      for (const [name, forged] of Object.entries(forgeries)) {
        const response = await postEvent(forged);
        expect(response.status, name).toBe(400);
        expect(response.headers.get("content-type"), name).toBe("application/problem+json");
        expect(await response.json(), name).toMatchObject({ type: "urn:svc:passport:problem:invalid-request" });
      }
      const recorded = await env.DB.prepare("SELECT count(*) AS n FROM marketplace_customers WHERE customer_key = ?")
        .bind(`legacy:${customer}:prod-passport-api`)
        .first<{ n: number }>();
      expect(recorded?.n).toBe(0);
    });
  });
});

describe("GET /v1/organisations/{id}/subscriptions", () => {
  it("shows the organisation's members each subscription with its events and the activation stage, and no one else", async () => {
    const account = freshAccountId();
    const registration = await subscribe({ customer_aws_account_id: account });
    const { acquisitionId, claimReference, message } = await handoff(registration.registration_token);
    expect(await deliver(message)).toMatchObject({ acked: true });
    const customer = await developmentToken();
    expect((await claim(customer, acquisitionId, claimReference)).status).toBe(200);
    const organisationId = (await holdingsOf(account)).accounts[0]?.organisation_id as string;
    const ended = agreementEvent(
      "Purchase Agreement Ended - Manufacturer",
      account,
      registration.license_arn as string,
      new Date(Date.now() + 1000).toISOString(),
    );
    expect((await postEvent(ended)).status).toBe(200);

    const answer = await api(customer, "GET", `/v1/organisations/${organisationId}/subscriptions`);
    expect(answer.status).toBe(200);
    const history = await answer.json<{
      subscriptions: { status: string; aws_account_id: string; events: { kind: string; outcome: string }[] }[];
      acquisitions: { acquisition_id: string; stages: { stage: string; status: string }[] }[];
    }>();
    expect(history.subscriptions).toHaveLength(1);
    expect(history.subscriptions[0]).toMatchObject({ aws_account_id: account, status: "ended" });
    expect(history.subscriptions[0]?.events).toEqual([
      expect.objectContaining({ kind: "Purchase Agreement Ended", outcome: "applied" }),
    ]);
    expect(history.acquisitions.map((a) => a.acquisition_id)).toEqual([acquisitionId]);
    expect(history.acquisitions[0]?.stages).toContainEqual(
      expect.objectContaining({ stage: "activation", status: "succeeded" }),
    );

    // Another customer, and an organisation without a marketplace account, see none of it.
    const other = await developmentToken();
    expect((await api(other, "GET", `/v1/organisations/${organisationId}/subscriptions`)).status).toBe(404);
    const own = await (await api(other, "POST", "/v1/organisations", { name: "Other Ltd" })).json<{ id: string }>();
    const empty = await api(other, "GET", `/v1/organisations/${own.id}/subscriptions`);
    expect(await empty.json()).toEqual({ subscriptions: [], acquisitions: [] });
  });
});
