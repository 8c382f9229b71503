import { credentialKind } from "@passport/domain";
import { describe, expect, it } from "vitest";

const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const base64 = (bytes: number) => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))));

describe("credentialKind", () => {
  it("recognises the secret half of an AWS key pair under the names it is written with", () => {
    for (const value of [
      `aws_secret_access_key=${AWS_SECRET}`,
      `AWS_SECRET_ACCESS_KEY: ${AWS_SECRET}`,
      `export AWS_SECRET_ACCESS_KEY="${AWS_SECRET}"`,
      `{"SecretAccessKey": "${AWS_SECRET}"}`,
      `secret-access-key = ${AWS_SECRET}`,
    ]) {
      expect(credentialKind(value), value).toBe("AWS secret access key");
    }
    expect(credentialKind(`AKIAIOSFODNN7EXAMPLE ${AWS_SECRET}`)).toBe("AWS access key id");
  });

  it("recognises a marketplace registration token pasted bare, wherever it stands", () => {
    // The simulator's tokens (95 random bytes) and longer ones; base64 of 95 bytes always ends in '='.
    for (let i = 0; i < 200; i++) {
      for (const token of [base64(95), base64(95).slice(0, -1), base64(150)]) {
        if (token.length < 64 || !/\d/.test(token)) continue;
        expect(credentialKind(`see ${token} here`), token).toBe("registration token");
      }
    }
  });

  it("recognises a token whose slashes cut every piece shorter than 30 characters", () => {
    // Found by the random test above: no '+', no padding, and no piece of 30 characters.
    const token =
      "gtZ2mGeJMGCzVn3IAYd8CsHsODIb/UbolHlMVXPZv6J9/NvIA2vH7SxvHac15wSYynFF9/G1p8jyZMUz8wCBQ1sTFe7ZeNdLDL/ceq/M/hTGqDl3fPNSV1Ldoiw5FSM";
    expect(credentialKind(`see ${token} here`)).toBe("registration token");
  });

  it("lets ordinary published values through", () => {
    for (const value of [
      "Demo Organisation operates agents.demo.example",
      "secret access key rotation was reviewed by the auditor",
      "https://github.com/SomeOrganisation/SomeRepositoryName/tree/main/src/deeply/nested/path/with/many/segments/file",
      "https://drive.google.com/file/d/1aBcD3fGhIjKlMnOpQrStUvWxYz0123456/view",
      "https://evidence.example.com/reports/2026/annual-penetration-test-report-for-the-payments-api-version-3",
      `sha-256:${"0123456789abcdef".repeat(4)}`,
      "0123456789abcdef".repeat(5),
      "pkg:npm/%40scope/name@1.2.3",
      "aws-marketplace:prod-abc123",
    ]) {
      expect(credentialKind(value), value).toBeUndefined();
    }
  });
});
