import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deliver, freshAccountId, handoff, holdingsOf, subscribe } from "./support.ts";

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

/** A completed acquisition: the agreement, its account and its passport exist. */
async function acquired(options: { legacy?: boolean } = {}) {
  const account = freshAccountId();
  const registration = await subscribe({ customer_aws_account_id: account, ...options });
  const { message } = await handoff(registration.registration_token);
  expect(await deliver(message)).toMatchObject({ acked: true });
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
    const envelope = (message: Record<string, string>, offsetMs: number) => ({
      Type: "Notification",
      MessageId: crypto.randomUUID(),
      TopicArn: "arn:aws:sns:us-east-1:287250355862:aws-mp-subscription-notification-prodpassportapi",
      Message: JSON.stringify(message),
      Timestamp: new Date(Date.now() + offsetMs).toISOString(),
    });

    const pending = envelope(
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

    const success = envelope(
      {
        action: "unsubscribe-success",
        CustomerIdentifier: registration.customer_identifier as string,
        ProductCode: "prod-passport-api",
      },
      2000,
    );
    expect(await (await postEvent(success)).json()).toMatchObject({ status: "ended", duplicate: false });
    expect((await customerStatus(key))?.status).toBe("ended");

    const entitlementUpdated = envelope(
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
});
