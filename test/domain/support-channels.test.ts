// Spec 2.3 rule 4 and 5.5: evidence fields, tickets and screenshots never hold credentials. What a
// customer pastes from a support ticket or transcribes from a screenshot into a passport (evidence,
// a reference, a reason) is refused when it carries a secret: the filter covers what those carry.
// What spec 5.6 says is safe to send support passes.

import { credentialKind } from "@passport/domain";
import { describe, expect, it } from "vitest";

const REGISTRATION_TOKEN =
  "r6P0Xq5Gm3+Yt1vVb8Kx2Nw9Lz4Ac7Ue0Fh5Jk2Sd8Qp1Wo6Ri3Tn9Hm4Bg7Cy2Ex5Ds0Av8Zl3Ku6Jf1Ir9Gq4Pw7Mo2Nt5Lb8Vc0Xe3Ya6==";
const JWT =
  "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTEyMyIsImV4cCI6MTc5OTk5OTk5OX0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbi1oZXJl";

describe("spec 2.3 rule 4: what a support ticket or a screenshot could carry is refused", () => {
  it.each([
    [
      "the set-up page's form field, copied from the browser's developer tools",
      `x-amzn-marketplace-token=${REGISTRATION_TOKEN}`,
    ],
    ["a registration token read off a screenshot", `token shown on screen: ${REGISTRATION_TOKEN}`],
    [
      "a Dashboard request copied into a ticket",
      `curl -H "Authorization: Bearer ${JWT}" https://control.example/v1/me`,
    ],
    ["a bare sign-in token", JWT],
    ["an API key in a URL from the address bar", "https://api.example.com/v1/orders?api_key=Zx81kQ0pLm27Nv5Rt9Wb3Yc6"],
    ["a password in a URL", "https://admin:hunter2-correct-horse@gateway.example.com/config"],
    ["gateway configuration pasted whole", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
    ["a private key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"],
  ])("%s", (_what, text) => {
    expect(credentialKind(text)).toBeDefined();
  });

  it("lets through what spec 5.6 says is safe to send support", () => {
    const ticket = [
      "Passport: psp_0123456789abcdefghjkmnpqrs",
      "Acquisition: acq_zUI0pgEii7FFM8g8Mjo8WQ",
      "Failed stage: Customer identification (customer_identification)",
      "Time: 2026-11-28T08:12:31.000Z",
      "Error: ExpiredTokenException - The registration token expired before set-up could use it.",
      "Cloud account: 111122223333",
      "Product: prod-passport-api",
      "What changed just before: we rotated the gateway's TLS certificate.",
    ];
    for (const line of ticket) expect(credentialKind(line), line).toBeUndefined();
  });
});
