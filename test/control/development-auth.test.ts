import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import { developmentToken, freshOrganisation } from "../support/tokens.ts";

function me(token: string, environment: string) {
  return app.request(
    "http://control.test/v1/me",
    { headers: { authorization: `Bearer ${token}` } },
    { ...env, ENVIRONMENT: environment, IDENTITY_PROVIDER: env.TEST_IDENTITY_PROVIDER },
  );
}

describe("development tokens", () => {
  it("are accepted by the development configuration", async () => {
    const organisation = freshOrganisation();
    const token = await developmentToken({ subject: "dev-a", organisation, role: "viewer" });
    const response = await me(token, "development");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      subject: "dev-a",
      memberships: [{ organisation_id: organisation, role: "viewer" }],
    });
  });

  it("are rejected by the production configuration, which trusts only the configured issuer", async () => {
    const token = await developmentToken({ organisation: freshOrganisation(), role: "owner" });
    const response = await me(token, "production");
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toEqual({
      type: "urn:svc:passport:problem:unauthenticated",
      title: "Authentication required",
      status: 401,
      detail: "A valid bearer token is required.",
    });
  });
});
