import { describe, expect, it } from "vitest";
import { developmentToken } from "../support/tokens.ts";
import { api, claim, deliver, freshAccountId, handoff, holdingsOf, subscribe } from "./support.ts";

async function json(token: string, method: string, path: string, body?: unknown) {
  const response = await api(token, method, path, body);
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

describe("gateway bindings proven by the provider's statement", () => {
  it("verifies the acquisition's own license, and nothing else, for the passport the marketplace issued", async () => {
    const account = freshAccountId();
    const registration = await subscribe({ customer_aws_account_id: account });
    const handed = await handoff(registration.registration_token);
    expect(await deliver(handed.message)).toMatchObject({ acked: true });
    const owner = await developmentToken();
    expect((await claim(owner, handed.acquisitionId, handed.claimReference)).status).toBe(200);
    const [passport] = (await holdingsOf(account)).passports;
    const id = passport?.id as string;
    expect(registration.license_arn).toBeTruthy();

    const licensed = await json(owner, "POST", `/v1/passports/${id}/bindings`, {
      class: "gateway",
      value: registration.license_arn,
    });
    const other = await json(owner, "POST", `/v1/passports/${id}/bindings`, {
      class: "gateway",
      value: "arn:aws:license-manager::000000000000:license:l-someone-else",
    });
    const bindingId = (value: string) => licensed.bindings.find((b: { value: string }) => b.value === value)?.id;

    const proven = await json(
      owner,
      "POST",
      `/v1/passports/${id}/bindings/${bindingId(registration.license_arn as string)}/verify`,
    );
    expect(proven.result).toBe("verified");
    const verification = proven.passport.bindings.find(
      (b: { value: string }) => b.value === registration.license_arn,
    ).verification;
    expect(verification.method).toBe("provider_statement");
    expect(proven.passport.evidence.find((e: { id: string }) => e.id === verification.evidence)).toMatchObject({
      basis: "observed",
      claim: "binding.gateway_control",
      scope: `AWS Marketplace entitlement ${registration.license_arn}`,
    });

    const otherId = other.bindings.find((b: { value: string }) => b.value.endsWith("l-someone-else")).id;
    const refused = await json(owner, "POST", `/v1/passports/${id}/bindings/${otherId}/verify`);
    expect(refused).toMatchObject({
      result: "not_proven",
      reason: "the marketplace acquisition names another license or product",
    });
  });
});
