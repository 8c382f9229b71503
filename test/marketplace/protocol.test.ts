import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { errorType } from "../../workers/control/src/marketplace/adapter.ts";
import { backoffSeconds } from "../../workers/control/src/marketplace/consumer.ts";
import { keyedHash, openToken, sealToken } from "../../workers/control/src/marketplace/crypto.ts";
import { changeKey, parseSubscriptionChange } from "../../workers/control/src/marketplace/events.ts";

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

  it("reads a bare SNS message in either key spelling to the same agreement key", async () => {
    const kebab = await parseSubscriptionChange(
      { action: "subscribe-success", "customer-identifier": "c-1", "product-code": "p-1" },
      now,
    );
    const pascal = await parseSubscriptionChange(
      { action: "subscribe-success", CustomerIdentifier: "c-1", ProductCode: "p-1" },
      now,
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
      );
      expect(change).toMatchObject({ kind: "Purchase Agreement Amended", status: "active", agreementId: "agmt-1" });
      expect(changeKey(change)).toBe("agreement:111122223333:agmt-1");
    }
  });
});
