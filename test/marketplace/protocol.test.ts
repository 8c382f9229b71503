import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { entitlementIsCurrent, errorType } from "../../workers/control/src/marketplace/adapter.ts";
import { keyedHash, openToken, sealToken } from "../../workers/control/src/marketplace/crypto.ts";
import {
  changeKey,
  EVENT_TIME_ALLOWANCE_MS,
  parseSubscriptionChange,
} from "../../workers/control/src/marketplace/events.ts";
import { developmentCertOrigin, isSigningCertUrl } from "../../workers/control/src/marketplace/sns-certificates.ts";
import { backoffSeconds } from "../../workers/control/src/marketplace/stage-runner.ts";

describe("AWS JSON error types", () => {
  it("strips the namespace prefix from __type and the URI suffix from x-amzn-ErrorType", () => {
    expect(errorType(new Headers(), { __type: "com.amazonaws.awsmpmetering#ExpiredTokenException" })).toBe(
      "ExpiredTokenException",
    );
    const headers = new Headers({
      "x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazonaws.awsmpmetering/",
    });
    expect(errorType(headers, undefined)).toBe("ThrottlingException");
    expect(errorType(headers, { message: "no type in the body" })).toBe("ThrottlingException");
    expect(errorType(new Headers(), {})).toBeUndefined();
  });
});

describe("retry backoff", () => {
  it("doubles from the base per attempt and stops at five minutes", () => {
    expect([1, 2, 3, 4, 5].map((attempt) => backoffSeconds(2, attempt))).toEqual([2, 4, 8, 16, 32]);
    expect(backoffSeconds(2, 20)).toBe(300);
    expect(backoffSeconds(0, 3)).toBe(0);
  });
});

describe("token sealing", () => {
  it("opens only for the acquisition it was sealed for", async () => {
    const sealed = await sealToken(env.MARKETPLACE_TOKEN_ENCRYPTION_KEY, "acq_one", "token+/=");
    expect(await openToken(env.MARKETPLACE_TOKEN_ENCRYPTION_KEY, "acq_one", sealed)).toBe("token+/=");
    await expect(openToken(env.MARKETPLACE_TOKEN_ENCRYPTION_KEY, "acq_two", sealed)).rejects.toThrow();
  });

  it("hashes per purpose, so a token hash never equals a claim-reference hash of the same text", async () => {
    const key = env.MARKETPLACE_TOKEN_HASH_KEY;
    expect(await keyedHash(key, "registration-token", "x")).not.toBe(await keyedHash(key, "claim-reference", "x"));
    expect(await keyedHash(key, "registration-token", "x")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("subscription change parsing", () => {
  const now = "2026-10-20T00:00:00.000Z";
  const noEnvelopeExpected = () => Promise.reject(new Error("no SNS envelope in this test"));

  it("reads a bare SNS message in either key spelling to the same agreement key", async () => {
    const kebab = await parseSubscriptionChange(
      { action: "subscribe-success", "customer-identifier": "c-1", "product-code": "p-1" },
      now,
      noEnvelopeExpected,
    );
    const pascal = await parseSubscriptionChange(
      { action: "subscribe-success", CustomerIdentifier: "c-1", ProductCode: "p-1" },
      now,
      noEnvelopeExpected,
    );
    expect(changeKey(kebab)).toBe("legacy:c-1:p-1");
    expect(changeKey(pascal)).toBe("legacy:c-1:p-1");
    expect(kebab.status).toBe("active");
    // Without a MessageId, the same body is the same event.
    expect(kebab.eventId).toBe(
      (
        await parseSubscriptionChange(
          { action: "subscribe-success", "customer-identifier": "c-1", "product-code": "p-1" },
          now,
          noEnvelopeExpected,
        )
      ).eventId,
    );
  });

  it("treats Manufacturer and Proposer copies of an agreement event as the same kind", async () => {
    for (const suffix of ["Manufacturer", "Proposer"]) {
      const change = await parseSubscriptionChange(
        {
          id: `e-${suffix}`,
          "detail-type": `Purchase Agreement Amended - ${suffix}`,
          time: now,
          detail: { agreement: { id: "agmt-1" }, acceptor: { accountId: "111122223333" } },
        },
        now,
        noEnvelopeExpected,
      );
      expect(change).toMatchObject({ kind: "Purchase Agreement Amended", status: "active", agreementId: "agmt-1" });
      expect(changeKey(change)).toBe("agreement:111122223333:agmt-1");
    }
  });
});

describe("event times", () => {
  const now = "2026-10-20T00:00:00.000Z";
  const at = (time: string | undefined) =>
    parseSubscriptionChange(
      { id: crypto.randomUUID(), "detail-type": "Purchase Agreement Ended - Manufacturer", time, detail: {} },
      now,
      () => Promise.reject(new Error("no SNS envelope in this test")),
    );

  it("records a time beyond the allowance, or none, as the receive time", async () => {
    expect(await at("2099-01-01T00:00:00Z")).toMatchObject({ occurredAt: now, claimedTime: "2099-01-01T00:00:00Z" });
    const justBeyond = new Date(Date.parse(now) + EVENT_TIME_ALLOWANCE_MS + 1000).toISOString();
    expect((await at(justBeyond)).occurredAt).toBe(now);
    expect((await at("not a time")).occurredAt).toBe(now);
    expect((await at(undefined)).occurredAt).toBe(now);
  });

  it("keeps a time within the allowance (clock skew) and any earlier time", async () => {
    const skewed = new Date(Date.parse(now) + 60_000).toISOString();
    expect(await at(skewed)).toMatchObject({ occurredAt: skewed, receivedAt: now });
    expect((await at(skewed)).claimedTime).toBeUndefined();
    expect((await at("2026-10-19T23:00:00Z")).occurredAt).toBe("2026-10-19T23:00:00.000Z");
  });
});

describe("entitlement expiry", () => {
  const now = Date.parse("2026-10-20T00:00:00Z");

  it("reads epoch seconds and ISO date-times; no expiry means no end", () => {
    expect(entitlementIsCurrent(undefined, now)).toBe(true);
    expect(entitlementIsCurrent(now / 1000 + 60, now)).toBe(true);
    expect(entitlementIsCurrent(now / 1000 - 60, now)).toBe(false);
    expect(entitlementIsCurrent("2026-10-21T00:00:00Z", now)).toBe(true);
    expect(entitlementIsCurrent("2026-10-19T00:00:00.000+00:00", now)).toBe(false);
  });

  it("fails closed on an expiry it cannot read", () => {
    for (const unreadable of ["soon", "", "1893456000", "2026-13-45", null, {}, Number.NaN, now * 1000, -1]) {
      expect(entitlementIsCurrent(unreadable, now), String(unreadable)).toBe(false);
    }
  });
});

describe("SNS signing certificate URLs", () => {
  it("accepts https .pem URLs on SNS hosts only", () => {
    for (const url of [
      "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem",
      "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc.pem",
    ]) {
      expect(isSigningCertUrl(new URL(url)), url).toBe(true);
    }
    for (const url of [
      "http://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
      "https://sns.us-east-1.amazonaws.com.attacker.example/SimpleNotificationService-abc.pem",
      "https://attacker.example/sns.us-east-1.amazonaws.com/cert.pem",
      "https://sqs.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
      "https://sns.us-east-1.amazonaws.com:8443/SimpleNotificationService-abc.pem",
      "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem?x=1",
      "https://user@sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
      "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.crt",
    ]) {
      expect(isSigningCertUrl(new URL(url)), url).toBe(false);
    }
  });

  it("trusts the simulator's origin only in development", () => {
    const simulator = "http://127.0.0.1:8790";
    const url = new URL(`${simulator}/sns/SimpleNotificationService-simulator.pem`);
    const origin = developmentCertOrigin({ ENVIRONMENT: "development", MARKETPLACE_SNS_CERT_ORIGIN: simulator });
    expect(isSigningCertUrl(url, origin)).toBe(true);
    const production = developmentCertOrigin({ ENVIRONMENT: "production", MARKETPLACE_SNS_CERT_ORIGIN: simulator });
    expect(production).toBeUndefined();
    expect(isSigningCertUrl(url, production)).toBe(false);
  });
});
